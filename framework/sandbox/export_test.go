package sandbox

// OwnNamespace is ownNamespace, for the tests.
var OwnNamespace = ownNamespace
