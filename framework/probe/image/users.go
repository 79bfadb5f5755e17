package image

import (
	"fmt"
	"strings"
)

// User is one line of the probe image's /etc/passwd.
type User struct {
	Name     string
	UID, GID int64
}

// Group is one line of the probe image's /etc/group.
type Group struct {
	Name    string
	GID     int64
	Members []string
}

// UserID is the image's user volperm; ExtraGroup is volperm-extra, the group only its
// /etc/group gives that user (docs/spec.md [groups.policy]: what supplementalGroupsPolicy Merge
// adds and Strict leaves out; kubernetes issue 112879). No catalogue case probes as uid 5000
// with explicit ids, so the image's groups never change the other cases.
const (
	UserID     = 5000
	ExtraGroup = 50000
)

// Users and Groups are the image's /etc/passwd and /etc/group: the oracle and the harness's
// runtime read them as a runtime reads the image (framework.ImageLookup).
var (
	Users  = []User{{"root", 0, 0}, {"volperm", UserID, UserID}}
	Groups = []Group{{"root", 0, nil}, {"volperm", UserID, nil}, {"volperm-extra", ExtraGroup, []string{"volperm"}}}
)

// Passwd is the image's /etc/passwd.
func Passwd() string {
	var b strings.Builder
	for _, u := range Users {
		fmt.Fprintf(&b, "%s:x:%d:%d::/:/sbin/nologin\n", u.Name, u.UID, u.GID)
	}
	return b.String()
}

// GroupFile is the image's /etc/group.
func GroupFile() string {
	var b strings.Builder
	for _, g := range Groups {
		fmt.Fprintf(&b, "%s:x:%d:%s\n", g.Name, g.GID, strings.Join(g.Members, ","))
	}
	return b.String()
}
