package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/sessionfix/sessionfix/mcpname"
)

// loadInventoryIndex reads an inventory file ("" = none) into an index of raw identities.
func loadInventoryIndex(path string) (*mcpname.Index, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read inventory: %w", err)
	}
	var inv struct {
		Servers map[string]struct {
			Tools []string `json:"tools"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(b, &inv); err != nil {
		return nil, fmt.Errorf("read inventory %s: %w", path, err)
	}
	ix := mcpname.NewIndex()
	for server, s := range inv.Servers {
		for _, t := range s.Tools {
			ix.Add(mcpname.Raw(server, t))
		}
	}
	return ix, nil
}
