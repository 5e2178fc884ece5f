// Package wire encodes and decodes Kubernetes watch streams with the real apimachinery/client-go machinery: the
// codec factory's serializers and framers, client-go's rest/watch Encoder and Decoder. Nothing here writes a byte
// of the wire format by itself.
package wire

import (
	"bytes"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	restwatch "k8s.io/client-go/rest/watch"

	"github.com/watchwire/watchwire/tools/refgen/kinds"
)

// Media types of the two watch encodings.
const (
	Protobuf = runtime.ContentTypeProtobuf // application/vnd.kubernetes.protobuf
	JSON     = runtime.ContentTypeJSON     // application/json
)

// ResponseContentType is the Content-Type the API server sends for a watch in mediaType (the apiserver appends
// ";stream=watch" to every media type but JSON).
func ResponseContentType(mediaType string) string {
	if mediaType == JSON {
		return JSON
	}
	return mediaType + ";stream=watch"
}

func info(mediaType string) (runtime.SerializerInfo, error) {
	i, ok := runtime.SerializerInfoForMediaType(kinds.Codecs.SupportedMediaTypes(), mediaType)
	if !ok || i.StreamSerializer == nil || i.StreamSerializer.Framer == nil {
		return i, fmt.Errorf("no stream serializer for %q", mediaType)
	}
	return i, nil
}

// Encoder writes watch events to w as the API server's watch handler does: the object is encoded by the
// embedded encoder (the media type's serializer, for gv), wrapped in a metav1.WatchEvent whose object.raw holds
// those bytes, encoded by the stream serializer and written with one Write to the framer's frame writer.
func Encoder(w io.Writer, mediaType string, gv schema.GroupVersion) (*restwatch.Encoder, error) {
	i, err := info(mediaType)
	if err != nil {
		return nil, err
	}
	eventEncoder := kinds.Codecs.EncoderForVersion(i.StreamSerializer.Serializer, gv)
	embedded := kinds.Codecs.EncoderForVersion(i.Serializer, gv)
	return restwatch.NewEncoder(streaming.NewEncoder(i.StreamSerializer.Framer.NewFrameWriter(w), eventEncoder), embedded), nil
}

// EncodeStream encodes events into one byte slice.
func EncodeStream(events []watch.Event, mediaType string, gv schema.GroupVersion) ([]byte, error) {
	var buf bytes.Buffer
	enc, err := Encoder(&buf, mediaType, gv)
	if err != nil {
		return nil, err
	}
	for i := range events {
		if err := enc.Encode(&events[i]); err != nil {
			return nil, fmt.Errorf("event %d (%s): %w", i, events[i].Type, err)
		}
	}
	return buf.Bytes(), nil
}

// Decoder reads a watch stream as client-go's REST client does (rest.Request.Watch): the framer's frame reader,
// the stream serializer for metav1.WatchEvent, and the typed clients' decoder (scheme.Codecs.WithoutConversion())
// for the embedded objects.
func Decoder(r io.ReadCloser, mediaType string, gv schema.GroupVersion) (*restwatch.Decoder, error) {
	i, err := info(mediaType)
	if err != nil {
		return nil, err
	}
	objectDecoder := kinds.Codecs.WithoutConversion().DecoderToVersion(i.Serializer, gv)
	eventDecoder := streaming.NewDecoder(i.StreamSerializer.Framer.NewFrameReader(r), i.StreamSerializer.Serializer)
	return restwatch.NewDecoder(eventDecoder, objectDecoder), nil
}

// DecodeStream decodes every event of a complete stream.
func DecodeStream(data []byte, mediaType string, gv schema.GroupVersion) ([]watch.Event, error) {
	dec, err := Decoder(io.NopCloser(bytes.NewReader(data)), mediaType, gv)
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	var out []watch.Event
	for {
		t, obj, err := dec.Decode()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("event %d: %w", len(out), err)
		}
		out = append(out, watch.Event{Type: t, Object: obj})
	}
}

// ProtobufRoundTrip encodes obj with the protobuf serializer (for gv) and decodes the bytes into a fresh object of
// the same Go type with the raw protobuf serializer (no conversion, no defaulting). The result is the object that
// proto.Unmarshal of the bytes yields, so its JSON is what the API server would send for the same protobuf.
func ProtobufRoundTrip(obj runtime.Object, gv schema.GroupVersion, fresh runtime.Object) (runtime.Object, []byte, error) {
	i, err := info(Protobuf)
	if err != nil {
		return nil, nil, err
	}
	data, err := runtime.Encode(kinds.Codecs.EncoderForVersion(i.Serializer, gv), obj)
	if err != nil {
		return nil, nil, fmt.Errorf("protobuf encode: %w", err)
	}
	out, _, err := i.Serializer.Decode(data, nil, fresh)
	if err != nil {
		return nil, nil, fmt.Errorf("protobuf decode: %w", err)
	}
	return out, data, nil
}

// EncodeObject encodes one object with the media type's serializer for gv (the embedded encoding of a watch event).
func EncodeObject(obj runtime.Object, mediaType string, gv schema.GroupVersion) ([]byte, error) {
	i, err := info(mediaType)
	if err != nil {
		return nil, err
	}
	return runtime.Encode(kinds.Codecs.EncoderForVersion(i.Serializer, gv), obj)
}
