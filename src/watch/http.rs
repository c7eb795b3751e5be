//! A tiny HTTP/1.1 server for `GET /metrics`, on `std::net`, in its own
//! thread: it serves the latest exposition text the watch loop published and
//! nothing else (404 for other paths, 405 for other methods), then closes the
//! connection.
//!
//! Connections are served side by side, so that one that sends nothing (or a
//! byte at a time) never delays a scrape: the thread waits for a connection,
//! and while any is open it looks at each every few milliseconds on
//! non-blocking sockets, reading its request head and writing its answer as
//! far as the socket takes them. It stays bounded: at most
//! [`MAX_CONNECTIONS`] are open (a new one closes the one open longest), and
//! each is closed after [`TIMEOUT`] for its request head and as long again
//! for its answer.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest request head read.
const MAX_HEAD: usize = 8 << 10;
/// The most time a connection's request head may take, and then its answer
/// (a client sending a byte at a time, or reading none, cannot hold a
/// connection longer).
pub const TIMEOUT: Duration = Duration::from_secs(2);
/// Connections open at once, at most.
pub const MAX_CONNECTIONS: usize = 64;
/// How often open connections are looked at.
const TICK: Duration = Duration::from_millis(5);

/// The text served at `/metrics`, replaced by the watch loop.
pub type Published = Arc<Mutex<String>>;

/// A running metrics server.
#[derive(Debug)]
pub struct MetricsServer {
    addr: SocketAddr,
    _thread: JoinHandle<()>,
}

impl MetricsServer {
    /// Binds `addr` and serves `published` from a new thread.
    pub fn start(addr: SocketAddr, published: Published) -> io::Result<MetricsServer> {
        Self::start_with(addr, published, TIMEOUT)
    }

    /// [`MetricsServer::start`] with another time allowed to each
    /// connection's request head and to its answer.
    pub fn start_with(
        addr: SocketAddr,
        published: Published,
        timeout: Duration,
    ) -> io::Result<MetricsServer> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let thread = std::thread::Builder::new()
            .name("rlctl-metrics".into())
            .spawn(move || serve_all(&listener, &published, timeout))?;
        Ok(MetricsServer {
            addr,
            _thread: thread,
        })
    }

    /// The address bound (with the port the system chose for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

/// Accepts and serves connections for ever.
fn serve_all(listener: &TcpListener, published: &Published, timeout: Duration) {
    let mut open: Vec<Connection> = Vec::new();
    loop {
        // Nothing open: wait for a connection. Else take those waiting, if
        // any, and look at every open one.
        let wait = open.is_empty();
        if listener.set_nonblocking(!wait).is_err() {
            std::thread::sleep(TICK);
            continue;
        }
        loop {
            match listener.accept() {
                Ok((stream, _)) => {
                    if stream.set_nonblocking(true).is_ok() {
                        if open.len() >= MAX_CONNECTIONS {
                            open.remove(0);
                        }
                        open.push(Connection::new(stream, timeout));
                    }
                    if wait {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    // Out of descriptors, say: let the open ones finish.
                    std::thread::sleep(TICK);
                    break;
                }
            }
        }
        open.retain_mut(|connection| connection.advance(published));
        if !open.is_empty() {
            std::thread::sleep(TICK);
        }
    }
}

/// One connection: its request head as read, then its answer as written.
struct Connection {
    stream: TcpStream,
    timeout: Duration,
    /// When the current phase (head, then answer) must be over.
    deadline: Instant,
    head: Vec<u8>,
    /// The answer, once the head is read, and how much of it was written.
    answer: Option<(Vec<u8>, usize)>,
}

impl Connection {
    fn new(stream: TcpStream, timeout: Duration) -> Self {
        Connection {
            stream,
            timeout,
            deadline: Instant::now() + timeout,
            head: Vec::new(),
            answer: None,
        }
    }

    /// Reads and writes what the socket takes now; false once the
    /// connection is done (answered, closed by the client, failed or too
    /// slow), and it is closed when dropped.
    fn advance(&mut self, published: &Published) -> bool {
        if self.answer.is_none() {
            match self.read_head() {
                Ok(true) => {
                    self.answer = Some((answer(&self.head, published), 0));
                    self.deadline = Instant::now() + self.timeout;
                }
                Ok(false) => return Instant::now() < self.deadline,
                Err(_) => return false,
            }
        }
        let Some((answer, written)) = &mut self.answer else {
            return false;
        };
        while *written < answer.len() {
            match self.stream.write(&answer[*written..]) {
                Ok(0) => return false,
                Ok(n) => *written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Instant::now() < self.deadline;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        let _ = self.stream.flush();
        false
    }

    /// Reads what has come of the request head: true once it is complete
    /// (or the client stopped sending, or it reached [`MAX_HEAD`]).
    fn read_head(&mut self) -> io::Result<bool> {
        let mut buf = [0; 1024];
        loop {
            if self.head.windows(4).any(|w| w == b"\r\n\r\n") || self.head.len() >= MAX_HEAD {
                return Ok(true);
            }
            match self.stream.read(&mut buf) {
                Ok(0) => return Ok(true),
                Ok(n) => self.head.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// The whole answer to a request head.
fn answer(head: &[u8], published: &Published) -> Vec<u8> {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let mut parts = line.trim_ascii().split(|&b| b == b' ');
    let (method, target) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let path = target.split(|&b| b == b'?').next().unwrap_or_default();
    let (status, body) = match (method, path) {
        (b"GET" | b"HEAD", b"/metrics") => (
            "200 OK",
            published.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        ),
        (b"GET" | b"HEAD", _) => ("404 Not Found", "only /metrics is served\n".to_string()),
        _ => ("405 Method Not Allowed", "only GET /metrics\n".to_string()),
    };
    let content_type = if status.starts_with("200") {
        "text/plain; version=0.0.4; charset=utf-8"
    } else {
        "text/plain; charset=utf-8"
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if method != b"HEAD" {
        out.extend_from_slice(body.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(addr: SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_the_published_text_and_nothing_else() {
        let published: Published = Arc::new(Mutex::new("rlctl_x 1\n".into()));
        let server =
            MetricsServer::start("127.0.0.1:0".parse().unwrap(), published.clone()).unwrap();
        let addr = server.addr();
        let ok = get(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains("version=0.0.4"));
        assert!(ok.ends_with("\r\n\r\nrlctl_x 1\n"), "{ok}");
        *published.lock().unwrap() = "rlctl_x 2\n".into();
        assert!(get(addr, "GET /metrics?x=1 HTTP/1.0\r\n\r\n").ends_with("rlctl_x 2\n"));
        assert!(get(addr, "GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get(addr, "POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
        assert!(get(addr, "\u{0}\u{1}garbage\r\n\r\n").starts_with("HTTP/1.1 405"));
        // A client that sends nothing and closes does not stop the server.
        drop(TcpStream::connect(addr).unwrap());
        assert!(get(addr, "GET /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200"));
    }

    /// True while the server keeps `stream` open without answering it.
    fn still_waiting(stream: &mut TcpStream) -> bool {
        stream.set_nonblocking(true).unwrap();
        let waiting =
            matches!(stream.read(&mut [0; 16]), Err(e) if e.kind() == io::ErrorKind::WouldBlock);
        stream.set_nonblocking(false).unwrap();
        waiting
    }

    /// Found by review: connections were served one at a time, each given
    /// 2 s to send its request, so six that sent nothing held a scrape 12 s,
    /// past Prometheus's 10 s scrape timeout.
    #[test]
    fn connections_that_send_nothing_do_not_hold_a_scrape() {
        let published: Published = Arc::new(Mutex::new("rlctl_x 1\n".into()));
        // Idle connections may wait a minute: a scrape answered while they
        // are still open did not wait for them.
        let timeout = Duration::from_secs(60);
        let server =
            MetricsServer::start_with("127.0.0.1:0".parse().unwrap(), published, timeout).unwrap();
        let addr = server.addr();
        let mut idle: Vec<TcpStream> = (0..6).map(|_| TcpStream::connect(addr).unwrap()).collect();
        let mut scrape = TcpStream::connect(addr).unwrap();
        // Against a hang only: without the fix the answer comes after the
        // idle connections' minute each.
        scrape
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        scrape
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut out = String::new();
        scrape.read_to_string(&mut out).unwrap();
        assert!(out.ends_with("\r\n\r\nrlctl_x 1\n"), "{out}");
        assert!(idle.iter_mut().all(still_waiting));
    }

    #[test]
    fn open_connections_are_bounded_and_the_oldest_gives_way() {
        let published: Published = Arc::new(Mutex::new("rlctl_x 1\n".into()));
        let timeout = Duration::from_secs(60);
        let server =
            MetricsServer::start_with("127.0.0.1:0".parse().unwrap(), published, timeout).unwrap();
        let addr = server.addr();
        let mut idle: Vec<TcpStream> = (0..MAX_CONNECTIONS + 2)
            .map(|_| TcpStream::connect(addr).unwrap())
            .collect();
        let answer = get(addr, "GET /metrics HTTP/1.1\r\n\r\n");
        assert!(answer.ends_with("rlctl_x 1\n"), "{answer}");
        // The three opened first were closed unanswered to make room.
        for stream in &mut idle[..3] {
            stream
                .set_read_timeout(Some(Duration::from_secs(30)))
                .unwrap();
            let closed = match stream.read(&mut [0; 16]) {
                Ok(n) => n == 0,
                Err(e) => e.kind() == io::ErrorKind::ConnectionReset,
            };
            assert!(closed);
        }
        assert!(idle[3..].iter_mut().all(still_waiting));
    }
}
