import Observation

/// The context of one screen: a node of the view-hierarchy tree (`parent`, `children`) and of the
/// screen chain (`previous`, `next`), holding the screen's forward values, preference handlers and
/// received preferences (docs/SEMANTICS.md §1).
///
/// ```swift
/// let stack = ScreenStack()
/// let root = stack.push { $0[TitleKey.self] = "Home" }
/// let detail = stack.push()
/// detail[TitleKey.self]   // "Home": forward values flow to later screens
/// ```
///
/// ## Concurrency
///
/// A context graph (a stack and all its screens) lives in one isolation domain: create it, read it,
/// write it and pop it from one actor or thread, or behind one lock. `ScreenContext` is therefore not
/// `Sendable`; handlers are plain closures called synchronously on the caller's thread. Observation
/// callbacks (`withObservationTracking`'s `onChange`) fire synchronously inside the mutating call.
/// The server keeps each session's graph inside one actor and lets only `Sendable` snapshots out.
public final class ScreenContext: Observable, Identifiable {
    /// Created by the first tracked read: a context nobody observes (every context on the server)
    /// pays for no registrar, and its writes skip the notification bookkeeping, since no observer
    /// can exist before a tracked read created the registrar.
    ///
    /// Boxed in a class: `ObservationRegistrar` is a resilient struct, so an optional of it is
    /// tested, copied and destroyed through value witnesses at every check, which callgrind put at
    /// about a fifth of a push and pop; a box is tested as a plain pointer.
    private var observation: RegistrarBox?

    /// The registrar, created on first use; for tracked reads.
    var registrar: ObservationRegistrar {
        if let observation { return observation.registrar }
        let created = RegistrarBox()
        observation = created
        return created.registrar
    }

    /// Whether anything may observe this context (a tracked read created its registrar).
    var isObservable: Bool { observation != nil }

    /// Runs a mutation, telling observers of `keyPath` if there can be any. The key path is built
    /// only then: getting even a literal's key path object costs a runtime call and a retain.
    func mutate<Member>(_ keyPath: @autoclosure () -> KeyPath<ScreenContext, Member>, _ change: () -> Void) {
        if let observation {
            observation.registrar.withMutation(of: self, keyPath: keyPath(), change)
        } else {
            change()
        }
    }

    func willSet<Member>(_ keyPath: KeyPath<ScreenContext, Member>) {
        observation?.registrar.willSet(self, keyPath: keyPath)
    }

    func didSet<Member>(_ keyPath: KeyPath<ScreenContext, Member>) {
        observation?.registrar.didSet(self, keyPath: keyPath)
    }

    /// The behaviour this context was created with; it decides how it links itself.
    public var behavior: any ScreenContextBehavior { behaviorStorage.behavior }
    /// The behaviour, held in one word: the library's own behaviours (stateless, or a style) by
    /// case, any other in a box (see `BehaviorStorage`).
    private let behaviorStorage: BehaviorStorage
    /// `.screen` or `.navigationStack`, stamped by the behaviour.
    public let role: ScreenContextRole
    /// Whether the behaviour is `PresentationBehavior` (a presented stack): a tested case, so that
    /// `ScreenStack.isCoveredByPresentation` casts no existential at every push.
    var isPresentation: Bool { behaviorStorage.isPresentation }

    private weak var parentStorage: ScreenContext?
    private var childrenStorage: [ScreenContext] = []
    weak var previousLink: ScreenContext?
    private weak var nextStorage: ScreenContext?
    /// Contexts whose `previous` is this one: the screens that may inherit its values.
    /// Kept as one weak reference plus an array only for more (a stack screen has one successor),
    /// so that a screen costs no array allocation.
    weak var firstSuccessor: ScreenContext?
    var moreSuccessors: [WeakContext] = []

    /// Every live successor.
    var successors: [ScreenContext] {
        var result: [ScreenContext] = []
        if let firstSuccessor { result.append(firstSuccessor) }
        for link in moreSuccessors { if let context = link.context { result.append(context) } }
        return result
    }

    private func addSuccessor(_ context: ScreenContext) {
        if firstSuccessor == nil {
            firstSuccessor = context
        } else {
            moreSuccessors.append(WeakContext(context))
        }
    }

    /// Local value overrides, typed and named, in one storage.
    var values = EntryTable()
    /// Handlers, received preferences and arrivals: created when the first of them is stored, so
    /// that a screen that takes part in no preference walk (most of them) holds one nil word
    /// instead of three dictionaries and a counter.
    private var preferenceState: PreferenceState?
    /// The id the `ScreenStack` holding this screen gave it; nil for a context outside a stack.
    public internal(set) var screenID: ScreenID?

    /// The preference storage, created on first write.
    private var writablePreferenceState: PreferenceState {
        if let preferenceState { return preferenceState }
        let created = PreferenceState()
        preferenceState = created
        return created
    }

    /// Preference handlers with their memory of the last delivery.
    var handlers: [EntryID: PreferenceHandler] {
        get { preferenceState?.handlers ?? [:] }
        _modify { yield &writablePreferenceState.handlers }
    }
    /// The last value this screen's handlers received, per key; kept when a handler goes.
    var received: [EntryID: Any] {
        get { preferenceState?.received ?? [:] }
        _modify { yield &writablePreferenceState.received }
    }
    /// The walk that brought each received value, when this process saw it (not after a restore).
    var arrivals: [EntryID: PreferenceArrival] {
        get { preferenceState?.arrivals ?? [:] }
        _modify { yield &writablePreferenceState.arrivals }
    }
    /// Bumped on every handler change, so that a late `passBack` of a replaced handler is ignored.
    var handlerGeneration: Int {
        get { preferenceState?.handlerGeneration ?? 0 }
        _modify { yield &writablePreferenceState.handlerGeneration }
    }

    /// Creates a context with a behaviour (default `.screen`) and runs `configure` on it at once,
    /// like `.screenContext(.navigation) { context in … }`.
    public init(
        _ behavior: some ScreenContextBehavior = .screen,
        configure: (ScreenContext) -> Void = { _ in }
    ) {
        self.behaviorStorage = BehaviorStorage(behavior)
        self.role = behavior.role
        configure(self)
    }

    // MARK: - Tree and chain

    /// The context this one is attached to (weak).
    public var parent: ScreenContext? {
        registrar.access(self, keyPath: \.parent)
        return parentStorage
    }

    /// `children` without registering an observation dependency, for the library's own hooks.
    var childrenUntracked: [ScreenContext] { childrenStorage }

    /// `parent` without registering an observation dependency, for the library's own hooks.
    var parentUntracked: ScreenContext? { parentStorage }

    /// The contexts attached to this one, in attach order.
    public var children: [ScreenContext] {
        registrar.access(self, keyPath: \.children)
        return childrenStorage
    }

    /// The screen before this one in its stack (weak); nil for the root.
    ///
    /// Set by behaviours. Changing it links the screen to another predecessor but notifies no value
    /// observers: push and pop never change what the remaining screens resolve.
    public var previous: ScreenContext? {
        get {
            registrar.access(self, keyPath: \.previous)
            return previousLink
        }
        set {
            let old = previousLink
            guard newValue !== old else { return }
            precondition(newValue !== self, "a screen context cannot be its own previous")
            guard isObservable else {
                // Nothing can run between the read above and the change: reuse what was read (each
                // read of a weak reference retains and releases the screen).
                old?.removeSuccessor(self)
                previousLink = newValue
                newValue?.addSuccessor(self)
                return
            }
            mutate(\.previous) {
                // Read again: an observer told of the coming change may have changed the links.
                previousLink?.removeSuccessor(self)
                previousLink = newValue
                newValue?.addSuccessor(self)
            }
        }
    }

    /// The screen after this one in its stack (weak); nil for the topmost screen.
    public var next: ScreenContext? {
        get {
            registrar.access(self, keyPath: \.next)
            return nextStorage
        }
        set {
            guard newValue !== nextStorage else { return }
            mutate(\.next) { nextStorage = newValue }
        }
    }

    /// Attaches this context to `parent`, in the seed's order: the context takes its parent, its
    /// behaviour's `didAttachTo` runs (a `.navigation` screen links to the parent's last child), it
    /// joins `parent.children`, then the parent's behaviour's `didUpdateChildren` runs (a
    /// `.navigationStack` links adjacent children). Attaching again to the same parent changes nothing.
    public func attach(to parent: ScreenContext) {
        precondition(parent !== self, "a screen context cannot be attached to itself")
        if let current = parentStorage, current !== parent {
            detachFromParent()
        }
        mutate(\.parent) { parentStorage = parent }
        behavior.context(self, didAttachTo: parent)
        if !parent.childrenStorage.contains(where: { $0 === self }) {
            parent.mutate(\.children) {
                parent.childrenStorage.append(self)
            }
        }
        parent.behavior.context(parent, didUpdateChildren: parent.childrenStorage)
    }

    /// Moves one of this context's children to the end of `children` (a tab brought to the front),
    /// then runs this context's `didUpdateChildren`. Nothing when it is not a child or already last.
    func moveChildToEnd(_ child: ScreenContext) {
        guard let index = childrenStorage.firstIndex(where: { $0 === child }), index != childrenStorage.count - 1
        else { return }
        mutate(\.children) {
            childrenStorage.append(childrenStorage.remove(at: index))
        }
        behavior.context(self, didUpdateChildren: childrenStorage)
    }

    /// Leaves the parent (which relinks its remaining children) and runs `cleanup()`.
    public func detach() {
        detachFromParent()
        cleanup()
    }

    private func detachFromParent() {
        guard let parent = parentStorage else {
            previous = nil
            next = nil
            return
        }
        if let index = parent.childrenStorage.firstIndex(where: { $0 === self }) {
            parent.mutate(\.children) {
                _ = parent.childrenStorage.remove(at: index)
            }
        }
        mutate(\.parent) { parentStorage = nil }
        parent.behavior.context(parent, didUpdateChildren: parent.childrenStorage)
        previous = nil
        next = nil
    }

    // MARK: - Traversal

    /// The first context of the `previous` chain: the root screen.
    public func head() -> ScreenContext {
        var current = self
        while let previous = current.previous { current = previous }
        return current
    }

    /// The last context of the `next` chain: the topmost screen.
    public func tail() -> ScreenContext {
        var current = self
        while let next = current.next { current = next }
        return current
    }

    /// The deepest last child: follows the last of `children` down the tree.
    public func top() -> ScreenContext {
        var current = self
        while let last = current.children.last { current = last }
        return current
    }

    // MARK: - Cleanup

    /// Clears this context's stored values, received preferences and handlers (docs/SEMANTICS.md §1).
    /// Runs when a screen is popped. Observers of cleared values are notified as for a removal.
    public func cleanup() {
        // Most popped screens hold no values and received nothing: skip building the key lists.
        if !values.isEmpty {
            for id in Array(values.keys) {
                _ = removeEntry(id, isObservationIgnored: false, defaultValue: nil)
            }
        }
        let receivedIDs = received.isEmpty ? [] : Array(received.keys)
        for id in receivedIDs {
            guard isObservable else {
                received.removeValue(forKey: id)
                continue
            }
            mutate(ObservationKeyPaths.preference(id)) {
                _ = received.removeValue(forKey: id)
            }
        }
        guard let preferenceState else { return }
        if !preferenceState.arrivals.isEmpty { preferenceState.arrivals.removeAll() }
        if !preferenceState.handlers.isEmpty {
            preferenceState.handlers.removeAll()
            preferenceState.handlerGeneration &+= 1
        }
    }

    // MARK: - Internals

    private func removeSuccessor(_ context: ScreenContext) {
        if firstSuccessor === context { firstSuccessor = nil }
        guard !moreSuccessors.isEmpty else { return }
        moreSuccessors.removeAll { $0.context == nil || $0.context === context }
        if firstSuccessor == nil, !moreSuccessors.isEmpty {
            firstSuccessor = moreSuccessors.removeFirst().context
        }
    }

    /// Key paths through which observation tracks one entry of one context.
    subscript(observedValue id: EntryID) -> Int { 0 }
    subscript(observedPreference id: EntryID) -> Int { 0 }
}

/// A context's preference storage (see `ScreenContext.preferenceState`).
private final class PreferenceState {
    var handlers: [EntryID: PreferenceHandler] = [:]
    var received: [EntryID: Any] = [:]
    var arrivals: [EntryID: PreferenceArrival] = [:]
    var handlerGeneration = 0
}

/// A context's behaviour in one word. The library's behaviours carry no state but a presentation's
/// style, so each is a case and `behavior` makes the same value again; any other behaviour is kept
/// as given, boxed (an existential takes five words, on every context).
private enum BehaviorStorage {
    case screen
    case navigation
    case navigationStack
    case tabView
    case sheet
    case fullScreenCover
    case other(OtherBehavior)

    final class OtherBehavior {
        let behavior: any ScreenContextBehavior
        init(_ behavior: any ScreenContextBehavior) { self.behavior = behavior }
    }

    init<B: ScreenContextBehavior>(_ behavior: B) {
        // Metatype comparisons: no cast of the value at every context made.
        if B.self == NavigationBehavior.self {
            self = .navigation
        } else if B.self == NavigationStackBehavior.self {
            self = .navigationStack
        } else if B.self == ScreenBehavior.self {
            self = .screen
        } else if B.self == TabViewBehavior.self {
            self = .tabView
        } else if let presentation = behavior as? PresentationBehavior {
            self = presentation.style == .sheet ? .sheet : .fullScreenCover
        } else {
            self = .other(OtherBehavior(behavior))
        }
    }

    var behavior: any ScreenContextBehavior {
        switch self {
        case .screen: ScreenBehavior()
        case .navigation: NavigationBehavior()
        case .navigationStack: NavigationStackBehavior()
        case .tabView: TabViewBehavior()
        case .sheet: PresentationBehavior(style: .sheet)
        case .fullScreenCover: PresentationBehavior(style: .fullScreenCover)
        case .other(let box): box.behavior
        }
    }

    var isPresentation: Bool {
        switch self {
        case .sheet, .fullScreenCover: true
        default: false
        }
    }
}

/// A context's registrar, boxed (see `ScreenContext.observation`).
private final class RegistrarBox {
    let registrar = ObservationRegistrar()
}

/// A weak reference to a context, for back links.
struct WeakContext {
    weak var context: ScreenContext?
    init(_ context: ScreenContext) { self.context = context }
}

extension ScreenContext: CustomStringConvertible {
    public var description: String {
        "ScreenContext(\(role.rawValue), values: \(values.count), handlers: \(handlers.count))"
    }
}
