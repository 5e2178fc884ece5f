// Command listkinds prints the kinds watchwire decodes, one "apiVersion kind goType" per line.
package main

import (
	"fmt"

	"github.com/watchwire/watchwire/tools/refgen/kinds"
)

func main() {
	for _, k := range kinds.All() {
		fmt.Println(k.APIVersion(), k.GVK.Kind, k.Type.PkgPath()+"."+k.Type.Name())
	}
}
