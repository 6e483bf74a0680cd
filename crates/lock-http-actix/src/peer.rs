//! Whether the client of a request has hung up. A waiting acquire can be granted in the same
//! instant its client closes the connection; before answering such a grant, the handler looks
//! at the socket, and releases the grant if the client is gone, rather than leave a lock that
//! nobody will use until its lease ends.

use std::any::Any;
use std::os::fd::{AsRawFd, RawFd};

use actix_web::dev::Extensions;
use actix_web::HttpRequest;

/// The socket of a connection, remembered when it is accepted.
#[derive(Debug, Clone, Copy)]
struct PeerSocket(RawFd);

/// Remembers each TCP connection's socket for [`has_hung_up`]. [`crate::serve`] registers it;
/// on another server: `HttpServer::new(...).on_connect(lock_http_actix::remember_peer_socket)`.
pub fn remember_peer_socket(connection: &dyn Any, data: &mut Extensions) {
    if let Some(stream) = connection.downcast_ref::<actix_web::rt::net::TcpStream>() {
        data.insert(PeerSocket(stream.as_raw_fd()));
    }
}

/// True when the request's client has closed its connection (end of stream or reset): nothing
/// sent now will be read. False when it is connected, or when the socket is unknown (a test
/// server, a connection type other than TCP).
pub(crate) fn has_hung_up(req: &HttpRequest) -> bool {
    let Some(PeerSocket(fd)) = req.conn_data::<PeerSocket>().copied() else {
        return false;
    };
    let mut byte = [0u8; 1];
    // SAFETY: `fd` is the socket of the connection serving `req`; the connection owns it for as
    // long as the request is being handled, which covers this call. MSG_PEEK leaves any bytes in
    // the socket for the server to read, and MSG_DONTWAIT never blocks.
    let read = unsafe {
        libc::recv(
            fd,
            byte.as_mut_ptr().cast(),
            byte.len(),
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    if read == 0 {
        return true;
    }
    read < 0
        && matches!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::ECONNRESET | libc::ENOTCONN | libc::EPIPE)
        )
}
