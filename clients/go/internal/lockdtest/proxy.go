package lockdtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy is a TCP proxy in front of a lockd that a test can cut off: then every open connection
// is closed and new ones are closed as soon as they are accepted, as when the network to lockd
// fails while lockd itself lives on.
type Proxy struct {
	// URL is the proxy's address as a base URL: http://127.0.0.1:PORT.
	URL string

	target   string
	listener net.Listener

	mu       sync.Mutex
	cut      bool
	drop     bool
	conns    map[net.Conn]bool
	accepted int
}

// NewProxy proxies to the server at target (http://host:port) until the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{URL: "http://" + listener.Addr().String(), target: u.Host, listener: listener, conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() {
		_ = listener.Close()
		p.Cut()
	})
	return p
}

// Cut closes every connection through the proxy and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for conn := range p.conns {
		_ = conn.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// Restore lets connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// Breaks closes every open connection (as a network failure would), and lets new ones through.
func (p *Proxy) Break() {
	p.Cut()
	p.Restore()
}

// DropAnswers makes the connections opened from now on pass requests to lockd but close,
// unanswered, as soon as lockd answers: the client never learns what lockd did.
func (p *Proxy) DropAnswers(drop bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop = drop
}

// Accepted counts the connections the proxy has let through.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

func (p *Proxy) serve() {
	for {
		client, err := p.listener.Accept()
		if err != nil {
			return
		}
		go p.pipe(client)
	}
}

func (p *Proxy) pipe(client net.Conn) {
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		_ = client.Close()
		return
	}
	p.mu.Unlock()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	p.accepted++
	p.conns[client] = true
	p.conns[server] = true
	drop := p.drop
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	copyAndClose := func(to, from net.Conn) {
		_, _ = io.Copy(to, from)
		_ = to.Close()
		_ = from.Close()
		done <- struct{}{}
	}
	dropAndClose := func(to, from net.Conn) {
		// The first byte of the answer means lockd has done what it will: close unanswered.
		_, _ = from.Read(make([]byte, 1))
		_ = to.Close()
		_ = from.Close()
		done <- struct{}{}
	}
	go copyAndClose(server, client)
	if drop {
		go dropAndClose(client, server)
	} else {
		go copyAndClose(client, server)
	}
	<-done
	<-done
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}
