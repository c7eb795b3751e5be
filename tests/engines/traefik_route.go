// The path Traefik routes a request target on, computed with Go's own
// net/url and path packages, for tests/cli/traefik.rs to compare with
// rlctl's reading (src/simulate/gateway/traefik_path.rs).
//
// Reads JSON strings (request targets), one per line, on standard input, and
// writes for each a line: the target, a tab, then the routing path as a JSON
// string, or "-" when Go or Traefik answers 400 before routing.
//
// The steps follow what Traefik's HTTP server does with an entry point's
// defaults (pkg/server/server_entrypoint_tcp.go: denyFragment, normalizePath,
// sanitizePath; pkg/muxer/http/mux.go: withRoutingPath), written here over
// the standard library. URL.JoinPath with no elements is written out as
// current Go has it (path.Join of the escaped path, a trailing slash kept),
// because older releases, such as the one Debian ships, leave the path as
// it is.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
)

// Escapes the routing path keeps (Traefik's reservedCharacters).
var reserved = map[string]bool{
	"%3A": true, "%2F": true, "%3F": true, "%23": true, "%5B": true, "%5D": true,
	"%40": true, "%21": true, "%24": true, "%26": true, "%27": true, "%28": true,
	"%29": true, "%2A": true, "%2B": true, "%2C": true, "%3B": true, "%3D": true,
	"%25": true,
}

func unreserved(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
		b == '-' || b == '.' || b == '_' || b == '~'
}

// route returns the routing path of target, false when it is answered 400.
func route(target string) (string, bool) {
	// A space ends the target in the request line; what follows is then no
	// HTTP version.
	if strings.Contains(target, " ") {
		return "", false
	}
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return "", false
	}
	// denyFragment
	if strings.Contains(u.RawPath, "#") {
		return "", false
	}
	// normalizePath: escapes of unreserved characters decoded, the others
	// upper-cased, in the raw path when there is one.
	if u.RawPath != "" {
		var b strings.Builder
		raw := u.RawPath
		for i := 0; i < len(raw); i++ {
			if raw[i] != '%' {
				b.WriteByte(raw[i])
				continue
			}
			if i+2 >= len(raw) {
				return "", false
			}
			escape := strings.ToUpper(raw[i : i+3])
			value, _ := strconv.ParseUint(escape[1:], 16, 8)
			if unreserved(byte(value)) {
				b.WriteByte(byte(value))
			} else {
				b.WriteString(escape)
			}
			i += 2
		}
		u.RawPath = b.String()
	}
	// sanitizePath: URL.JoinPath() as current Go writes it.
	escaped := u.EscapedPath()
	var joined string
	if strings.HasPrefix(escaped, "/") {
		joined = path.Join(escaped)
	} else {
		escaped = "/" + escaped
		joined = path.Join(escaped)[1:]
	}
	if strings.HasSuffix(escaped, "/") && !strings.HasSuffix(joined, "/") {
		joined += "/"
	}
	sanitized, err := url.ParseRequestURI(joined)
	if err != nil {
		return "", false
	}
	// withRoutingPath: every escape decoded but the reserved ones.
	escaped = sanitized.EscapedPath()
	var routing strings.Builder
	for i := 0; i < len(escaped); i++ {
		if escaped[i] != '%' {
			routing.WriteByte(escaped[i])
			continue
		}
		if i+2 >= len(escaped) {
			return "", false
		}
		escape := escaped[i : i+3]
		if reserved[escape] {
			routing.WriteString(escape)
		} else {
			decoded, err := url.PathUnescape(escape)
			if err != nil {
				return "", false
			}
			routing.WriteString(decoded)
		}
		i += 2
	}
	return routing.String(), true
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var target string
		if err := json.Unmarshal(in.Bytes(), &target); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		quoted, _ := json.Marshal(target)
		if routed, ok := route(target); ok {
			routedQuoted, _ := json.Marshal(routed)
			fmt.Printf("%s\t%s\n", quoted, routedQuoted)
		} else {
			fmt.Printf("%s\t-\n", quoted)
		}
	}
}
