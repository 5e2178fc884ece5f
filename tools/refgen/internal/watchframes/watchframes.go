// Package watchframes splits a Kubernetes protobuf watch stream (4-byte big-endian length, then that many bytes) into
// its frames.
package watchframes

import (
	"encoding/binary"
	"fmt"
)

// Split returns the frames of data, which must end exactly after the last one.
func Split(data []byte) ([][]byte, error) {
	var frames [][]byte
	for len(data) > 0 {
		if len(data) < 4 {
			return nil, fmt.Errorf("protobuf stream: %d trailing bytes", len(data))
		}
		n := binary.BigEndian.Uint32(data)
		if uint64(len(data)-4) < uint64(n) {
			return nil, fmt.Errorf("protobuf stream: frame of %d bytes, %d left", n, len(data)-4)
		}
		frames = append(frames, data[4:4+n])
		data = data[4+n:]
	}
	return frames, nil
}
