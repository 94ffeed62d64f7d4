package main

import (
	"github.com/sessionfix/sessionfix/inventory"
	"github.com/sessionfix/sessionfix/mcpname"
)

// loadInventoryIndex reads an inventory file ("" = none) into an index of raw identities. A
// file that is not valid JSON (comments allowed) or not of the inventory shape is an error
// naming the file, line and column (inventory.Load).
func loadInventoryIndex(path string) (*mcpname.Index, error) {
	if path == "" {
		return nil, nil
	}
	inv, err := inventory.Load(path)
	if err != nil {
		return nil, err
	}
	return inv.Index(), nil
}
