// A plain net/http server, as Traefik's entry points run one, for
// tests/cli/traefik.rs to send raw request lines to: Go's server answers
// the requests its HTTP/1 parser refuses itself (400, or 505 for a version
// it does not serve), and hands the others to the handler, which answers
// 299 so that the test can tell the two apart.
//
// Listens on 127.0.0.1 on a free port, writes the address on standard
// output, and serves until killed.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
)

func main() {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(listener.Addr().String())
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(299)
	})
	fmt.Fprintln(os.Stderr, http.Serve(listener, handler))
	os.Exit(1)
}
