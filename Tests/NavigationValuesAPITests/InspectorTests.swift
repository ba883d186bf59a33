import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesWire
import TestSupport
import Testing

@Suite struct InspectorTests {
    static var folder: URL { repositoryRoot.appendingPathComponent("inspector") }

    /// If this fails, run `scripts/embed-inspector.sh` after editing a file in `inspector/`.
    @Test func theEmbeddedFilesEqualTheFiles() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { !$0.hasPrefix(".") }
        #expect(Set(InspectorRoutes.fileNames) == Set(names))
        for name in names {
            let file = try Data(contentsOf: Self.folder.appendingPathComponent(name))
            #expect(InspectorRoutes.embeddedText(of: name).map { Data($0.utf8) } == file, "\(name)")
        }
    }

    /// Offline: nothing is loaded from another host (no CDN, no fonts, no analytics).
    @Test func theFilesReferNoOtherHost() throws {
        for name in InspectorRoutes.fileNames {
            // An SVG names its XML namespace with a URL, which is never fetched.
            let text = try #require(InspectorRoutes.embeddedText(of: name))
                .replacingOccurrences(of: "xmlns=\"http://www.w3.org/2000/svg\"", with: "")
            #expect(!text.contains("http://") && !text.contains("https://") && !text.contains("//cdn"), "\(name)")
        }
    }

    @Test func theServerServesThePageWithAStrictPolicy() async throws {
        try await withRunningServer { client, _ in
            let bare = try await client.send("GET", "/inspector?session=s_1")
            #expect(bare.status == 308)
            #expect(bare.header("Location") == "/inspector/?session=s_1")
            let page = try await client.send("GET", "/inspector/")
            #expect(page.status == 200)
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            #expect(page.body == Array((InspectorRoutes.embeddedText(of: "index.html") ?? "").utf8))
            let policy = try #require(page.header("Content-Security-Policy"))
            #expect(policy.contains("default-src 'none'") && policy.contains("connect-src 'self'"))
            #expect(page.header("X-Content-Type-Options") == "nosniff")
            #expect(page.header("Referrer-Policy") == "no-referrer")
            let etag = try #require(page.header("ETag"))
            let again = try await client.send("GET", "/inspector/", headers: ["If-None-Match": etag])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            for name in InspectorRoutes.fileNames where name != "index.html" {
                let file = try await client.send("GET", "/inspector/\(name)")
                #expect(file.status == 200, "\(name)")
                let type = file.header("Content-Type") ?? ""
                if name.hasSuffix(".js") { #expect(type == "text/javascript; charset=utf-8") }
                if name.hasSuffix(".css") { #expect(type == "text/css; charset=utf-8") }
            }
            expectProblem(try await client.send("GET", "/inspector/nothing.js"), 404, type: "not-found")
            #expect(try await client.send("HEAD", "/inspector/").status == 200)
        }
    }
}
