package router

// TestCert gives the external test package the certificate maker of the
// internal tests.
var TestCert = testCert
