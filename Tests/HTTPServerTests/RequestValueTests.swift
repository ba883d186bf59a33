import HTTPServer
import Testing

/// `Request` shares its storage between copies until one changes (copy on write): a change
/// through one copy must never show through another, whichever field it is.
@Suite struct RequestValueTests {
    @Test func aCopyOfARequestChangesAlone() {
        var original = Request(
            method: .post, path: "/items/7?q=a", headers: ["X-Tag": "one"], body: Array("body".utf8))
        original.remoteAddress = "127.0.0.1:1000"
        let untouched = original
        var changed = original
        changed.method = .put
        changed.target = "/other"
        changed.path = "/other"
        changed.query.append(name: "q", value: "b")
        changed.headers.add(name: "X-Tag", value: "two")
        changed.headers["X-New"] = "yes"
        changed.body.append(contentsOf: Array(" more".utf8))
        changed.parameters.append(name: "id", value: "7")
        changed.minorVersion = 0
        changed.remoteAddress = "[::1]:2000"

        for request in [original, untouched] {
            #expect(request.method == .post)
            #expect(request.target == "/items/7?q=a")
            #expect(request.path == "/items/7")
            #expect(request.query.values(for: "q") == ["a"])
            #expect(request.headers.values(for: "x-tag") == ["one"])
            #expect(request.headers["x-new"] == nil)
            #expect(request.body == Array("body".utf8))
            #expect(request.parameters.isEmpty)
            #expect(request.minorVersion == 1)
            #expect(request.remoteAddress == "127.0.0.1:1000")
        }
        #expect(changed.method == .put)
        #expect(changed.path == "/other")
        #expect(changed.query.values(for: "q") == ["a", "b"])
        #expect(changed.headers.values(for: "x-tag") == ["one", "two"])
        #expect(changed.body == Array("body more".utf8))
        #expect(changed.parameters["id"] == "7")
        #expect(changed.minorVersion == 0)
        #expect(changed.remoteAddress == "[::1]:2000")

        // And the other way round: the original changed, the copy made before it not.
        var source = Request(method: .get, path: "/a", body: [1])
        let before = source
        source.body.append(2)
        source.headers.add(name: "Host", value: "h")
        #expect(before.body == [1])
        #expect(before.headers.count == 0)
        #expect(source.body == [1, 2])
    }
}
