package azstore

import (
	"bytes"
	"errors"
	"mime"
	"strconv"
	"strings"
)

// parseChangeset reads a $batch response: a multipart/mixed body whose
// parts are application/http responses, possibly nested one level deep in
// a changeset (multipart/mixed) part. It is a small hand-written splitter:
// a transaction's answer is read for every batch the bulk writer sends, and
// the standard library's multipart and HTTP readers cost more CPU than the
// request itself on a 2-core machine shared with the service.
func parseChangeset(contentType string, body []byte) ([]changesetPart, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		return nil, errors.New("the batch response is not multipart")
	}
	return splitParts(body, params["boundary"], 0, nil)
}

var (
	errNoBoundary   = errors.New("the batch response has no part boundary")
	errUnterminated = errors.New("the batch response ends inside a part")
	errBadPart      = errors.New("a part of the batch response is not an HTTP response")
)

// splitParts appends the responses of a multipart body to out.
func splitParts(body []byte, boundary string, depth int, out []changesetPart) ([]changesetPart, error) {
	delim := []byte("--" + boundary)
	// The first delimiter may open the body; later ones start a line.
	i := bytes.Index(body, delim)
	if i < 0 || (i > 0 && body[i-1] != '\n') {
		return out, errNoBoundary
	}
	rest := body[i+len(delim):]
	lineDelim := append([]byte("\n"), delim...)
	for {
		if bytes.HasPrefix(rest, []byte("--")) {
			return out, nil // the close delimiter
		}
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return out, errUnterminated
		}
		rest = rest[nl+1:]
		j := bytes.Index(rest, lineDelim)
		if j < 0 {
			return out, errUnterminated
		}
		part := bytes.TrimSuffix(rest[:j], []byte("\r"))
		rest = rest[j+len(lineDelim):]

		header, content := splitHeader(part)
		ct := headerValue(header, "Content-Type")
		if mt, params, err := mime.ParseMediaType(ct); err == nil && strings.HasPrefix(mt, "multipart/") && depth == 0 {
			var err error
			if out, err = splitParts(content, params["boundary"], depth+1, out); err != nil {
				return out, err
			}
			continue
		}
		p, err := parseHTTPResponse(content)
		if err != nil {
			return out, err
		}
		out = append(out, p)
	}
}

// splitHeader splits a MIME part or HTTP message at its blank line.
func splitHeader(b []byte) (header, body []byte) {
	if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
		return b[:i+2], b[i+4:]
	}
	if i := bytes.Index(b, []byte("\n\n")); i >= 0 {
		return b[:i+1], b[i+2:]
	}
	return b, nil
}

// headerValue returns the first value of the named header in a header
// block (one "Name: value" per line), matching the name without case.
func headerValue(header []byte, name string) string {
	for len(header) > 0 {
		line := header
		if nl := bytes.IndexByte(header, '\n'); nl >= 0 {
			line, header = header[:nl], header[nl+1:]
		} else {
			header = nil
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if ok && strings.EqualFold(string(bytes.TrimSpace(k)), name) {
			return string(bytes.TrimSpace(v))
		}
	}
	return ""
}

// parseHTTPResponse reads one application/http part: a status line
// ("HTTP/1.1 204 No Content"), headers, a blank line and the body.
func parseHTTPResponse(b []byte) (changesetPart, error) {
	b = bytes.TrimLeft(b, "\r\n")
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return changesetPart{}, errBadPart
	}
	status := bytes.Fields(b[:nl])
	if len(status) < 2 || !bytes.HasPrefix(status[0], []byte("HTTP/")) {
		return changesetPart{}, errBadPart
	}
	code, err := strconv.Atoi(string(status[1]))
	if err != nil || code < 100 || code > 999 {
		return changesetPart{}, errBadPart
	}
	header, body := splitHeader(b[nl+1:])
	if bytes.HasPrefix(b[nl+1:], []byte("\r\n")) || bytes.HasPrefix(b[nl+1:], []byte("\n")) {
		header, body = nil, bytes.TrimPrefix(bytes.TrimPrefix(b[nl+1:], []byte("\r")), []byte("\n"))
	}
	cid, _ := strconv.Atoi(headerValue(header, "Content-ID"))
	return changesetPart{
		status:    code,
		etag:      headerValue(header, "ETag"),
		contentID: cid,
		body:      bytes.Clone(bytes.TrimRight(body, "\r\n")),
	}, nil
}
