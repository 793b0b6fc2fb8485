package webrcon

// AcceptKey is the server's Sec-WebSocket-Accept, for the hostile test
// servers of package webrcon_test.
var AcceptKey = acceptKey
