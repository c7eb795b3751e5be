//! A tiny HTTP/1.1 server for `GET /metrics`, on `std::net`, in its own
//! thread: it serves the latest exposition text the watch loop published and
//! nothing else (404 for other paths, 405 for other methods). One connection
//! at a time, each with short timeouts, then closed.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The longest request head read.
const MAX_HEAD: usize = 8 << 10;
/// Read and write timeout of one connection, and the most time its request
/// head may take in all (a client sending a byte at a time cannot hold the
/// server longer).
const TIMEOUT: Duration = Duration::from_secs(2);

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
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let thread = std::thread::Builder::new()
            .name("rlctl-metrics".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    let _ = serve(stream, &published);
                }
            })?;
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

fn serve(mut stream: TcpStream, published: &Published) -> io::Result<()> {
    stream.set_read_timeout(Some(TIMEOUT))?;
    stream.set_write_timeout(Some(TIMEOUT))?;
    let mut head = Vec::new();
    let mut buf = [0; 1024];
    let start = std::time::Instant::now();
    while !head.windows(4).any(|w| w == b"\r\n\r\n")
        && head.len() < MAX_HEAD
        && start.elapsed() < TIMEOUT
    {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
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
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if method != b"HEAD" {
        stream.write_all(body.as_bytes())?;
    }
    stream.flush()
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
}
