package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MemberIDFile is the file in a daemon's data dir that holds its member id.
const MemberIDFile = "member-id"

// LoadMemberID returns a member id, 32 hex digits, kept in dir (in
// MemberIDFile) so that a daemon restarted on dir is the same member: the
// one there if it is well-formed, else a new random one, written there
// atomically. With dir empty it returns a new random one each time.
func LoadMemberID(dir string) (string, error) {
	if dir != "" {
		b, err := os.ReadFile(filepath.Join(dir, MemberIDFile))
		if err == nil && len(b) == 32 {
			if _, err := hex.DecodeString(string(b)); err == nil {
				return string(b), nil
			}
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("read member id: %w", err)
		}
	}
	var raw [16]byte
	if _, err := io.ReadFull(rand.Reader, raw[:]); err != nil {
		return "", fmt.Errorf("new member id: %w", err)
	}
	id := hex.EncodeToString(raw[:])
	if dir != "" {
		tmp := filepath.Join(dir, MemberIDFile+".tmp")
		if err := os.WriteFile(tmp, []byte(id), 0o644); err != nil {
			return "", fmt.Errorf("write member id: %w", err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, MemberIDFile)); err != nil {
			return "", fmt.Errorf("write member id: %w", err)
		}
	}
	return id, nil
}
