package lockd

// The HTTP client: one lockd server (or a load balancer in front of several), an API key, and
// the timeouts of its requests.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to one lockd. It is safe for concurrent use.
type Client struct {
	base    *url.URL
	apiKey  string
	timeout time.Duration
	maxWait time.Duration
	http    *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sends key as `Authorization: Bearer <key>` with every request (the server's
// --api-keys-file).
func WithAPIKey(key string) Option {
	return func(c *Client) { c.apiKey = key }
}

// WithTimeout bounds each request (default 10 s). A waiting acquire gets its wait on top; an
// observe stream has no such bound (its context ends it). Keepalives and renewals are bounded
// by their lease's deadline instead, when that is sooner.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) { c.timeout = d }
}

// WithMaxWait is the longest `wait_seconds` one waiting request asks for (default 30 s, whole
// seconds, at most the server's --max-wait-seconds). Lock, Acquire and Campaign wait longer by
// asking again until their context ends.
func WithMaxWait(d time.Duration) Option {
	return func(c *Client) { c.maxWait = d }
}

// WithHTTPClient sends the requests through h (its Timeout should be zero: the client bounds
// each request itself, and an observe stream lasts as long as its context).
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) { c.http = h }
}

// NewClient is a client of the lockd at baseURL (http://host:port, optionally with a path
// prefix). It makes no request.
func NewClient(baseURL string, options ...Option) (*Client, error) {
	base, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("lockd: base URL %q: %w", baseURL, err)
	}
	if (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("lockd: base URL %q: want http://host:port or https://host:port", baseURL)
	}
	if base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("lockd: base URL %q: no query or fragment, please", baseURL)
	}
	base.Path = strings.TrimSuffix(base.Path, "/")
	base.RawPath = ""
	c := &Client{base: base, timeout: 10 * time.Second, maxWait: 30 * time.Second, http: &http.Client{}}
	for _, option := range options {
		option(c)
	}
	if c.timeout <= 0 {
		return nil, fmt.Errorf("lockd: timeout must be positive, not %v", c.timeout)
	}
	if c.maxWait < time.Second || c.maxWait%time.Second != 0 {
		return nil, fmt.Errorf("lockd: max wait must be a whole number of seconds >= 1 s, not %v", c.maxWait)
	}
	if c.http == nil {
		return nil, errors.New("lockd: WithHTTPClient(nil)")
	}
	return c, nil
}

// BaseURL is the server's URL as given.
func (c *Client) BaseURL() string { return c.base.String() }

// request is one call to lockd.
type request struct {
	method string
	path   string // escaped, from the API root: /locks/report%2Fq1
	query  url.Values
	body   interface{}
	// timeout bounds the request (the client's default when zero); a context deadline that
	// comes sooner wins.
	timeout time.Duration
}

// answer is a success answer: its status and body.
type answer struct {
	status     int
	body       []byte
	retryAfter time.Duration
}

// do sends r. A 2xx is an answer; an error answer is a *Problem; no answer is a *RequestError.
func (c *Client) do(ctx context.Context, r request) (*answer, error) {
	timeout := r.timeout
	if timeout == 0 {
		timeout = c.timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := c.newRequest(ctx, r)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &RequestError{Method: r.method, Path: r.path, Err: unwrapURLError(err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, &RequestError{Method: r.method, Path: r.path, Err: fmt.Errorf("reading the answer (%d): %w", resp.StatusCode, unwrapURLError(err))}
	}
	retryAfter := parseRetryAfter(resp.Header.Get("Retry-After"))
	if resp.StatusCode >= 300 {
		return nil, parseProblem(resp.StatusCode, body, retryAfter)
	}
	return &answer{status: resp.StatusCode, body: body, retryAfter: retryAfter}, nil
}

// doJSON sends r and decodes a 2xx answer's body into out.
func (c *Client) doJSON(ctx context.Context, r request, out interface{}) (*answer, error) {
	a, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(a.body, out); err != nil {
		return nil, &RequestError{Method: r.method, Path: r.path, Err: fmt.Errorf("unreadable answer (%d): %w", a.status, err)}
	}
	return a, nil
}

func (c *Client) newRequest(ctx context.Context, r request) (*http.Request, error) {
	target := *c.base
	target.RawPath = c.base.Path + r.path
	path, err := url.PathUnescape(target.RawPath)
	if err != nil {
		return nil, fmt.Errorf("lockd: path %q: %w", r.path, err)
	}
	target.Path = path
	target.RawQuery = r.query.Encode()
	var body io.Reader
	if r.body != nil {
		encoded, err := json.Marshal(r.body)
		if err != nil {
			return nil, fmt.Errorf("lockd: %s %s: encoding the body: %w", r.method, r.path, err)
		}
		body = bytes.NewReader(encoded)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target.String(), body)
	if err != nil {
		return nil, fmt.Errorf("lockd: %s %s: %w", r.method, r.path, err)
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	return req, nil
}

// unwrapURLError drops net/url's wrapper, whose message repeats the whole URL.
func unwrapURLError(err error) error {
	var u *url.Error
	if errors.As(err, &u) {
		return u.Err
	}
	return err
}

func parseRetryAfter(header string) time.Duration {
	seconds, err := strconv.Atoi(strings.TrimSpace(header))
	if err != nil || seconds < 0 {
		return 0
	}
	return time.Duration(seconds) * time.Second
}

// segment is name as one escaped path segment, refusing what lockd can never accept as one.
func segment(what, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("lockd: %s name must not be empty", what)
	}
	return url.PathEscape(name), nil
}

// wholeSeconds checks that d is a whole number of seconds, at least min.
func wholeSeconds(what string, d time.Duration, min time.Duration) (int64, error) {
	if d < min || d%time.Second != 0 {
		return 0, fmt.Errorf("lockd: %s must be a whole number of seconds >= %v, not %v", what, min, d)
	}
	return int64(d / time.Second), nil
}
