/// HTTP/1.1 server on POSIX sockets (issue 4). Placeholder until the event loop lands.
public enum HTTPServerModule {}
