package main

import (
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/mcpname"
)

// loadInventoryIndex reads an inventory file ("" = none) into an index of raw identities. A
// file that is not valid JSON (comments allowed) or not of the inventory shape is an error
// naming the file, line and column (mcpinventory.Load).
func loadInventoryIndex(path string) (*mcpname.Index, error) {
	if path == "" {
		return nil, nil
	}
	inv, err := mcpinventory.Load(path)
	if err != nil {
		return nil, err
	}
	return inv.Index(), nil
}
