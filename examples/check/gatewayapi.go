package main

import "ramjet.dev/ramjet/compile/gatewayapi"

// Gateway API objects (SPEC §20) are read wherever manifests are: case
// files, -translate, -explain and -report.
func init() { gatewayapi.Register() }
