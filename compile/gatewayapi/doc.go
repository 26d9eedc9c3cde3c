// Package gatewayapi translates Gateway API objects into compile's input.
package gatewayapi
