//! A TCP proxy between lockd and PostgreSQL that a fault injector cuts, to see what lockd does
//! while its database is unreachable: `Refuse` (the port is closed, open connections are reset)
//! or `BlackHole` (connections stay open and are accepted, but not a byte is forwarded, as behind
//! a dead router). `restore` forwards again and closes every connection opened before it, so
//! that nothing sent into the black hole can reach the database later. Used by the checker's
//! runner and by the end-to-end tests (tests/e2e/proxy.rs).

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Forward,
    Refuse,
    BlackHole,
}

/// The proxy; it stops, closing every connection, when dropped.
pub struct Proxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

struct Shared {
    upstream: SocketAddr,
    /// One lock for the mode and the connections, so that no connection is admitted under a mode
    /// that has just ended.
    state: Mutex<State>,
    /// Whether the listening socket is open (it is closed while refusing).
    listening: AtomicBool,
    stopped: AtomicBool,
}

struct State {
    mode: Mode,
    connections: Vec<Arc<Connection>>,
}

/// One accepted connection; its pumps watch `state`.
struct Connection {
    client: TcpStream,
    state: AtomicU8,
}

const FORWARDING: u8 = 0;
const SWALLOWING: u8 = 1;
const CLOSED: u8 = 2;

/// How often blocked pumps and the acceptor look at the mode.
const TICK: Duration = Duration::from_millis(5);

impl Proxy {
    /// Starts forwarding from a free port on 127.0.0.1 to `upstream`.
    pub fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let addr = listener.local_addr().expect("proxy address");
        let shared = Arc::new(Shared {
            upstream,
            state: Mutex::new(State {
                mode: Mode::Forward,
                connections: Vec::new(),
            }),
            listening: AtomicBool::new(true),
            stopped: AtomicBool::new(false),
        });
        let acceptor = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || shared.accept_loop(listener, addr))
        };
        Self {
            addr,
            shared,
            acceptor: Some(acceptor),
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Cuts the database off: returns once `Refuse` has closed the port and reset every open
    /// connection, or once `BlackHole` forwards nothing more on any connection.
    pub fn cut(&self, mode: Mode) {
        assert_ne!(mode, Mode::Forward, "use restore()");
        let mut state = self.shared.lock();
        state.mode = mode;
        if mode == Mode::Refuse {
            state.connections.drain(..).for_each(|c| c.close());
        } else {
            for connection in &state.connections {
                let _ = connection.state.compare_exchange(
                    FORWARDING,
                    SWALLOWING,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                );
            }
        }
        drop(state);
        self.wait_listening(mode != Mode::Refuse);
    }

    /// Forwards again, on fresh connections only: every connection opened before is reset.
    pub fn restore(&self) {
        let mut state = self.shared.lock();
        state.mode = Mode::Forward;
        state.connections.drain(..).for_each(|c| c.close());
        drop(state);
        self.wait_listening(true);
    }

    fn wait_listening(&self, listening: bool) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.shared.listening.load(Ordering::SeqCst) != listening {
            assert!(
                Instant::now() < deadline,
                "the proxy's port did not {} in time",
                if listening { "open" } else { "close" }
            );
            thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        self.shared
            .lock()
            .connections
            .drain(..)
            .for_each(|c| c.close());
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Accepts until stopped. The listening socket is closed while refusing (connecting then
    /// fails at once, as with a stopped database) and bound again to the same port afterwards.
    fn accept_loop(self: Arc<Self>, listener: TcpListener, addr: SocketAddr) {
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let mut listener = Some(listener);
        while !self.stopped.load(Ordering::SeqCst) {
            let refusing = self.lock().mode == Mode::Refuse;
            if refusing && listener.is_some() {
                listener = None;
            } else if !refusing && listener.is_none() {
                let reopened = TcpListener::bind(addr).expect("bind the proxy's port again");
                reopened
                    .set_nonblocking(true)
                    .expect("non-blocking listener");
                listener = Some(reopened);
            }
            self.listening.store(listener.is_some(), Ordering::SeqCst);
            match listener.as_ref().map(TcpListener::accept) {
                Some(Ok((client, _))) => self.admit(client),
                Some(Err(error)) if error.kind() != ErrorKind::WouldBlock => {
                    panic!("proxy accept: {error}")
                }
                _ => thread::sleep(TICK),
            }
        }
    }

    /// Forwards a new connection, swallows it (black hole) or resets it (refusing).
    fn admit(&self, client: TcpStream) {
        client.set_nonblocking(false).expect("blocking stream");
        let mut state = self.lock();
        state
            .connections
            .retain(|c| c.state.load(Ordering::SeqCst) != CLOSED);
        let upstream = match state.mode {
            Mode::Refuse => return reset_on_close(&client),
            Mode::BlackHole => None,
            Mode::Forward => match TcpStream::connect(self.upstream) {
                Ok(upstream) => Some(upstream),
                Err(_) => return reset_on_close(&client),
            },
        };
        let connection = Arc::new(Connection {
            client: client.try_clone().expect("clone stream"),
            state: AtomicU8::new(if upstream.is_some() {
                FORWARDING
            } else {
                SWALLOWING
            }),
        });
        state.connections.push(Arc::clone(&connection));
        drop(state);
        let to_upstream = upstream
            .as_ref()
            .map(|u| u.try_clone().expect("clone stream"));
        {
            let connection = Arc::clone(&connection);
            let client = client.try_clone().expect("clone stream");
            thread::spawn(move || pump(&connection, client, to_upstream));
        }
        if let Some(upstream) = upstream {
            thread::spawn(move || pump(&connection, upstream, Some(client)));
        }
    }
}

impl Connection {
    /// Resets the connection: its pumps stop, and the last of them to drop it sends the reset.
    fn close(&self) {
        reset_on_close(&self.client);
        self.state.store(CLOSED, Ordering::SeqCst);
    }
}

/// Copies `from` to `to` while the connection forwards, and swallows what arrives while it does
/// not. Ends when either side closes or the connection is closed; the other pump follows within
/// a tick, and the sockets close when both have dropped them.
fn pump(connection: &Connection, mut from: TcpStream, mut to: Option<TcpStream>) {
    from.set_read_timeout(Some(TICK)).expect("read timeout");
    let mut buffer = [0u8; 16 * 1024];
    loop {
        if connection.state.load(Ordering::SeqCst) == CLOSED {
            break;
        }
        match from.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                if connection.state.load(Ordering::SeqCst) != FORWARDING {
                    continue;
                }
                if let Some(to) = to.as_mut() {
                    if to.write_all(&buffer[..n]).is_err() {
                        break;
                    }
                }
            }
            Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    connection.state.store(CLOSED, Ordering::SeqCst);
}

/// Makes the last close of `stream` send a reset rather than an orderly end.
fn reset_on_close(stream: &TcpStream) {
    let _ = socket2::SockRef::from(stream).set_linger(Some(Duration::ZERO));
}
