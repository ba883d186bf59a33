import Testing

@testable import HTTPServer

@Suite struct ConnectionStateMachineTests {
    let start = LoopInstant.now

    private func machine() -> ConnectionStateMachine {
        ConnectionStateMachine(connectedAt: start, headerTimeout: .seconds(10), idleTimeout: .seconds(60))
    }

    @Test func aNewConnectionMustSendItsHeadWithinTheHeaderTimeout() {
        var machine = machine()
        machine.bytesReceived(at: start + .seconds(9), isBody: false)
        #expect(machine.timerFired(at: start + .seconds(9.9)) == .none)
        #expect(machine.timerFired(at: start + .seconds(10)) == .close)
        #expect(machine.state == .closed)
    }

    @Test func theHeaderTimeoutOfALaterRequestStartsAtItsFirstByte() {
        var machine = machine()
        machine.requestReceived()
        #expect(machine.responseSent(at: start + .seconds(1), keepAlive: true) == .none)
        #expect(machine.state == .idle(since: start + .seconds(1)))
        #expect(machine.timerFired(at: start + .seconds(50)) == .none)
        machine.bytesReceived(at: start + .seconds(50), isBody: false)
        #expect(machine.state == .receivingHead(since: start + .seconds(50)))
        #expect(machine.timerFired(at: start + .seconds(59)) == .none)
        #expect(machine.timerFired(at: start + .seconds(60)) == .close)
    }

    @Test func anIdleKeepAliveConnectionClosesAfterTheIdleTimeout() {
        var machine = machine()
        machine.requestReceived()
        _ = machine.responseSent(at: start, keepAlive: true)
        #expect(machine.timerFired(at: start + .seconds(59)) == .none)
        #expect(machine.timerFired(at: start + .seconds(60)) == .close)
    }

    @Test func aBodyMayTakeLongerThanTheHeaderTimeoutWhileBytesKeepComing() {
        var machine = machine()
        machine.bytesReceived(at: start + .seconds(1), isBody: true)
        machine.bytesReceived(at: start + .seconds(40), isBody: true)
        #expect(machine.timerFired(at: start + .seconds(99)) == .none)
        #expect(machine.timerFired(at: start + .seconds(100)) == .close)
    }

    @Test func noTimeoutAppliesWhileResponding() {
        var machine = machine()
        machine.requestReceived()
        #expect(!machine.isReading)
        #expect(machine.timerFired(at: start + .seconds(3600)) == .none)
        machine.streamStarted()
        #expect(machine.state == .streaming)
        #expect(machine.timerFired(at: start + .seconds(7200)) == .none)
    }

    @Test func aResponseWithoutKeepAliveCloses() {
        var machine = machine()
        machine.requestReceived()
        #expect(machine.responseSent(at: start, keepAlive: false) == .close)
        #expect(machine.state == .closed)
    }

    @Test func shutdownClosesIdleConnectionsAndLetsResponsesFinish() {
        var idle = machine()
        #expect(idle.shutdownRequested() == .close)

        var busy = machine()
        busy.requestReceived()
        #expect(busy.shutdownRequested() == .none)
        #expect(!busy.keepsAlive(requested: true))
        #expect(busy.responseSent(at: start, keepAlive: true) == .close)
    }

    @Test func aClientClosingWhileStreamingClosesButNotWhileAHandlerRuns() {
        var streaming = machine()
        streaming.requestReceived()
        streaming.streamStarted()
        #expect(streaming.peerClosed() == .close)

        var responding = machine()
        responding.requestReceived()
        #expect(responding.peerClosed() == .none)
        #expect(responding.state == .responding)
    }

    @Test func anErrorResponseLingersAtMostTwoSeconds() {
        var machine = machine()
        machine.requestReceived()
        machine.finalResponseSent(at: start)
        #expect(machine.isReading)
        #expect(machine.timerFired(at: start + .seconds(1.9)) == .none)
        #expect(machine.timerFired(at: start + .seconds(2)) == .close)
    }
}

extension ConnectionStateMachineTests {
    @Test func aClientThatReadsNothingForTheIdleTimeoutIsClosedEvenWhileStreaming() {
        var machine = machine()
        machine.requestReceived()
        machine.streamStarted()
        machine.writeBlocked(at: start, madeProgress: false)
        machine.writeBlocked(at: start + .seconds(30), madeProgress: false)  // still stuck: the clock runs on
        #expect(machine.timerFired(at: start + .seconds(59)) == .none)
        machine.writeBlocked(at: start + .seconds(59), madeProgress: true)  // it read some: start again
        #expect(machine.timerFired(at: start + .seconds(100)) == .none)
        #expect(machine.timerFired(at: start + .seconds(119)) == .close)
    }

    @Test func aDrainedWriteStopsTheStallClock() {
        var machine = machine()
        machine.requestReceived()
        machine.writeBlocked(at: start, madeProgress: false)
        machine.writeDrained()
        #expect(machine.timerFired(at: start + .seconds(3600)) == .none)
    }
}
