//! RESP over TCP, as much of it as the benchmark speaks: commands out, replies in (arrays for
//! pub/sub messages), with nothing between the benchmark and the socket.

use std::io;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One connection to redis-server.
pub(super) struct RespConnection {
    stream: TcpStream,
    buffer: Vec<u8>,
}

#[derive(Debug)]
pub(super) enum Reply {
    Simple(String),
    Integer(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Reply>),
}

impl RespConnection {
    pub async fn connect(addr: &str) -> io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream,
            buffer: Vec::new(),
        })
    }

    /// Sends a command and reads its reply.
    pub async fn command(&mut self, args: &[&str]) -> io::Result<Reply> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            out.extend_from_slice(arg.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        self.stream.write_all(&out).await?;
        self.reply().await
    }

    /// The next reply (or pushed message). Cancel-safe: what a cancelled call read stays in
    /// the buffer for the next.
    pub async fn reply(&mut self) -> io::Result<Reply> {
        loop {
            if let Some((reply, used)) = parse(&self.buffer)? {
                self.buffer.drain(..used);
                return Ok(reply);
            }
            let mut chunk = [0u8; 4096];
            let read = self.stream.read(&mut chunk).await?;
            if read == 0 {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "redis closed"));
            }
            self.buffer.extend_from_slice(&chunk[..read]);
        }
    }

    /// Drops every complete reply already received, without waiting for more.
    pub fn discard_received(&mut self) -> io::Result<()> {
        let mut chunk = [0u8; 4096];
        loop {
            match self.stream.try_read(&mut chunk) {
                Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "redis closed")),
                Ok(read) => self.buffer.extend_from_slice(&chunk[..read]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        while let Some((_, used)) = parse(&self.buffer)? {
            self.buffer.drain(..used);
        }
        Ok(())
    }
}

/// One complete RESP reply at the start of `buffer`, and its length.
fn parse(buffer: &[u8]) -> io::Result<Option<(Reply, usize)>> {
    let Some(line_end) = buffer.windows(2).position(|w| w == b"\r\n") else {
        return Ok(None);
    };
    let line = std::str::from_utf8(&buffer[1..line_end]).map_err(io::Error::other)?;
    let after = line_end + 2;
    match buffer.first() {
        Some(b'+') => Ok(Some((Reply::Simple(line.to_owned()), after))),
        Some(b'-') => Err(io::Error::other(format!("redis error: {line}"))),
        Some(b':') => Ok(Some((
            Reply::Integer(line.parse().map_err(io::Error::other)?),
            after,
        ))),
        Some(b'$') => {
            let length: i64 = line.parse().map_err(io::Error::other)?;
            if length < 0 {
                return Ok(Some((Reply::Bulk(None), after)));
            }
            let end = after + length as usize;
            if buffer.len() < end + 2 {
                return Ok(None);
            }
            Ok(Some((
                Reply::Bulk(Some(buffer[after..end].to_vec())),
                end + 2,
            )))
        }
        Some(b'*') => {
            let length: i64 = line.parse().map_err(io::Error::other)?;
            let mut items = Vec::new();
            let mut used = after;
            for _ in 0..length.max(0) {
                let Some((item, len)) = parse(&buffer[used..])? else {
                    return Ok(None);
                };
                items.push(item);
                used += len;
            }
            Ok(Some((Reply::Array(items), used)))
        }
        _ => Err(io::Error::other("unexpected RESP reply")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pushed pub/sub message parses whole, or not at all while part of it is missing.
    #[test]
    fn arrays_parse_whole_or_wait() {
        let message = b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$4\r\nfree\r\n";
        let (reply, used) = parse(message).unwrap().unwrap();
        assert_eq!(used, message.len());
        assert!(matches!(reply, Reply::Array(items) if items.len() == 3));
        assert!(parse(&message[..message.len() - 3]).unwrap().is_none());
        assert!(matches!(
            parse(b":12\r\n").unwrap(),
            Some((Reply::Integer(12), 5))
        ));
    }
}
