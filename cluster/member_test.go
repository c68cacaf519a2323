package cluster

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// TestLoadMemberID: a data dir keeps its member id across loads; a
// damaged one is replaced; without a dir every id is new.
func TestLoadMemberID(t *testing.T) {
	dir := t.TempDir()
	id, err := LoadMemberID(dir)
	if _, herr := hex.DecodeString(id); err != nil || len(id) != 32 || herr != nil {
		t.Fatalf("LoadMemberID = %q, %v; want 32 hex digits", id, err)
	}
	if again, err := LoadMemberID(dir); again != id || err != nil {
		t.Errorf("second load = %q, %v; want %q", again, err, id)
	}
	if err := os.WriteFile(filepath.Join(dir, MemberIDFile), []byte("not an id"), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh, err := LoadMemberID(dir)
	if err != nil || len(fresh) != 32 || fresh == id {
		t.Errorf("load of a damaged id = %q, %v; want a new one", fresh, err)
	}
	if again, _ := LoadMemberID(dir); again != fresh {
		t.Errorf("the new id was not kept: %q, want %q", again, fresh)
	}
	a, _ := LoadMemberID("")
	b, _ := LoadMemberID("")
	if a == b || len(a) != 32 {
		t.Errorf("ids without a dir %q, %q; want two new ones", a, b)
	}
}
