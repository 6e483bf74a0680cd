//! A minimal HTTP/1.1 keep-alive client: one connection per benchmark client, requests written
//! and answers parsed by hand, so the client costs little next to the server it measures.

use std::io;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One keep-alive connection.
pub struct HttpConnection {
    stream: TcpStream,
    host: String,
    buffer: Vec<u8>,
}

/// An answer: status and body.
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

impl HttpConnection {
    pub async fn connect(addr: &str) -> io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream,
            host: addr.to_owned(),
            buffer: Vec::with_capacity(4096),
        })
    }

    /// Sends one request (with a JSON body when given) and reads its answer.
    pub async fn request(
        &mut self,
        method: &str,
        path: &str,
        json: Option<&[u8]>,
    ) -> io::Result<Answer> {
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.host);
        match json {
            Some(body) => head.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )),
            None => head.push_str("\r\n"),
        }
        let mut out = head.into_bytes();
        if let Some(body) = json {
            out.extend_from_slice(body);
        }
        self.stream.write_all(&out).await?;
        self.read_answer().await
    }

    async fn read_answer(&mut self) -> io::Result<Answer> {
        loop {
            if let Some((status, head_len, body_len)) = parse_head(&self.buffer)? {
                while self.buffer.len() < head_len + body_len {
                    self.fill().await?;
                }
                let body = self.buffer[head_len..head_len + body_len].to_vec();
                self.buffer.drain(..head_len + body_len);
                return Ok(Answer { status, body });
            }
            self.fill().await?;
        }
    }

    async fn fill(&mut self) -> io::Result<()> {
        let mut chunk = [0u8; 8192];
        let read = self.stream.read(&mut chunk).await?;
        if read == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        self.buffer.extend_from_slice(&chunk[..read]);
        Ok(())
    }
}

/// Status, head length and Content-Length of a complete head at the start of `buffer`.
fn parse_head(buffer: &[u8]) -> io::Result<Option<(u16, usize, usize)>> {
    let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Ok(None);
    };
    let head = std::str::from_utf8(&buffer[..end]).map_err(|_| bad("head is not UTF-8"))?;
    let status = head
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("no status"))?;
    let length = head
        .split("\r\n")
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())
                .flatten()
        })
        .unwrap_or(0);
    Ok(Some((status, end + 4, length)))
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}
