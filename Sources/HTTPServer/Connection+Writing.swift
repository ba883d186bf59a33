import CHTTPSystem

#if canImport(Glibc)
    import Glibc
#endif

extension Connection {
    // MARK: - Responses

    /// Queues a response to the request in flight and starts writing it. A complete response
    /// sent while pipelined requests are being answered (`isProcessing`) is written by
    /// `processBufferedRequests`, together with the responses after it when they are ready.
    func send(_ response: Response, at now: LoopInstant) {
        guard !isClosed, var current = inFlight, !current.isResponseQueued, current.writer == nil else { return }
        let keepAlive = machine.keepsAlive(requested: current.keepAlive)
        current.keepAlive = keepAlive
        let date = loop.dateCache.current()
        let bodyless = current.isHead || response.status.forbidsBody
        switch response.body {
        case .bytes(let body):
            let framing: ResponseEncoder.Framing = response.status.forbidsBody ? .none : .length(body.count)
            let copiesBody = !bodyless && body.count <= OutboundQueue.bodyCopyLimit
            // The head, and a small body behind it, go straight into the connection's buffer; a
            // large body is queued as it is, without a copy.
            outbound.encode(
                reserving: ResponseEncoder.estimatedHeadSize(response.headers) + (copiesBody ? body.count : 0)
            ) { out in
                ResponseEncoder.appendHead(
                    status: response.status,
                    headers: response.headers,
                    framing: framing,
                    keepAlive: keepAlive,
                    minorVersion: current.minorVersion,
                    date: date,
                    to: &out
                )
                if copiesBody { out.append(contentsOf: body) }
            }
            if !bodyless && !copiesBody { outbound.append(sharing: body) }
            current.isResponseQueued = true
            inFlight = current
            if isProcessing { return }
        case .stream(let produce):
            if bodyless {
                outbound.encode(reserving: ResponseEncoder.estimatedHeadSize(response.headers)) { out in
                    ResponseEncoder.appendHead(
                        status: response.status,
                        headers: response.headers,
                        framing: .none,
                        keepAlive: keepAlive,
                        minorVersion: current.minorVersion,
                        date: date,
                        to: &out
                    )
                }
                current.isResponseQueued = true
                inFlight = current
                if isProcessing { return }
            } else {
                startStream(produce, response: response, current: current, date: date)
            }
        }
        flush(at: now)
    }

    private func startStream(
        _ produce: @escaping @Sendable (ResponseWriter) async throws -> Void,
        response: Response,
        current: InFlight,
        date: [UInt8]
    ) {
        var current = current
        // HTTP/1.0 has no chunked coding: the body ends when the connection closes.
        current.isChunked = current.minorVersion == 1
        if !current.isChunked { current.keepAlive = false }
        outbound.encode(reserving: ResponseEncoder.estimatedHeadSize(response.headers)) { out in
            ResponseEncoder.appendHead(
                status: response.status,
                headers: response.headers,
                framing: current.isChunked ? .chunked : .untilClose,
                keepAlive: current.keepAlive,
                minorVersion: current.minorVersion,
                date: date,
                to: &out
            )
        }
        machine.streamStarted()
        // No request is read while the stream lasts, which may be hours: its bytes need no buffer.
        parser.releaseIdleBuffer(keepingUpTo: 0)
        streamGeneration += 1
        let generation = streamGeneration
        let loop = self.loop
        let writer = ResponseWriter(
            highWaterMark: loop.context.configuration.streamHighWaterMark, executor: loop.context.workers
        ) { bytes in
            loop.submit(.streamChunk(self, bytes, generation: generation))
        }
        current.writer = writer
        if machine.isShuttingDown { writer.close() }
        // On the worker threads, as handlers are: the stream's own work (reading a store,
        // encoding events) never runs on an I/O thread; its bytes reach the loop through `send`.
        current.streamTask = Task(executorPreference: loop.context.workers) {
            try? await produce(writer)
            loop.execute { self.finishStream(generation: generation) }
        }
        inFlight = current
    }

    func writeStreamChunk(_ bytes: [UInt8], generation: Int) {
        guard !isClosed, generation == streamGeneration, let current = inFlight, !current.isResponseQueued else {
            return
        }
        if bytes.count > ResponseEncoder.chunkCopyLimit {
            // A large chunk is queued as it is, between its size line and its CRLF, rather than
            // copied into the buffer: a stalled reader then holds one copy of it, not two.
            if current.isChunked {
                outbound.encode(reserving: 18) { ResponseEncoder.appendChunkHead(bytes.count, to: &$0) }
            }
            outbound.append(sharing: bytes, payload: bytes.count)
            if current.isChunked { outbound.append(copying: ResponseEncoder.crlf) }
        } else if current.isChunked {
            outbound.encode(reserving: bytes.count + 20, payload: bytes.count) {
                ResponseEncoder.appendChunk(bytes, to: &$0)
            }
        } else {
            outbound.append(copying: bytes, payload: bytes.count)
        }
        flush(at: loop.now)
    }

    private func finishStream(generation: Int) {
        guard !isClosed, generation == streamGeneration, var current = inFlight else { return }
        current.writer?.close()
        if current.isChunked { outbound.append(copying: ResponseEncoder.lastChunk) }
        current.isResponseQueued = true
        inFlight = current
        flush(at: loop.now)
    }

    // MARK: - Writing

    func flush(at now: LoopInstant) {
        guard !isClosed else { return }
        let flushed: OutboundQueue.Progress
        do {
            flushed = try outbound.flush(to: fd, tls: tls)
        } catch {
            close()  // EPIPE, ECONNRESET: the client is gone
            return
        }
        if flushed.payload > 0 { inFlight?.writer?.didFlush(flushed.payload) }
        if outbound.isEmpty {
            machine.writeDrained()
        } else {
            machine.writeBlocked(at: now, madeProgress: flushed.written > 0)
        }
        if outbound.isEmpty, let current = inFlight, current.isResponseQueued {
            finishResponse(current, at: now)
        }
    }

    private func finishResponse(_ current: InFlight, at now: LoopInstant) {
        inFlight = nil
        // Closing with unread requests would reset the connection and could destroy the response
        // before the client reads it: shut down our side and drain theirs first (RFC 9112 §9.6).
        let hasUnreadRequests = !current.keepAlive && !machine.isShuttingDown && parser.hasBufferedBytes
        if current.lingersAfterResponse || hasUnreadRequests {
            tls?.shutdown()
            Socket.shutdownWriting(fd)
            machine.finalResponseSent(at: now)
        } else if machine.responseSent(at: now, keepAlive: current.keepAlive) == .close {
            close()
            return
        }
        parser.releaseIdleBuffer()
        if !isProcessing { readAndProcess(at: now) }
    }

    // MARK: - Closing

    /// Closes the socket now; a stream's writer is closed and its task cancelled.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        machine.closed()
        if let current = inFlight {
            // Cancelled first, as in `shutdownRequested()`.
            current.streamTask?.cancel()
            current.writer?.close()
        }
        inFlight = nil
        outbound = OutboundQueue()
        if let tls {
            if !tls.isEstablished, reportsHandshakeFailure {
                let reason = handshakeFailure ?? "connection closed during the handshake"
                loop.context.configuration.tlsHandshakeFailed?(peer, reason)
            }
            tls.shutdown()
            tls.free()
        }
        Socket.close(fd)
        loop.connectionClosed(self)
    }
}
