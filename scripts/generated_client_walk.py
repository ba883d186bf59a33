"""The seed's Demo walk (docs/SEMANTICS.md §4) through a Python client that openapi-python-client
generated from the served /openapi.json, with its typed models only: create a session with a
schema, set a value on the root, push (the new screen reads it forward), set a handler on the root,
publish from the top screen (it flows back), pop, and read the preference the root kept; then the
same in one typed batch. Run by scripts/check-generated-client.sh:

    python3 generated_client_walk.py URL      (the generated package importable)
"""
import sys

from navigation_values_server_client import AuthenticatedClient, Client
from navigation_values_server_client.api.screens import (
    get_screen, pop_screens, publish_preference, push_screen, set_handler, update_values)
from navigation_values_server_client.api.sessions import create_session, get_session
from navigation_values_server_client.api.stacks import apply_batch
from navigation_values_server_client.models import (
    Batch, BatchApplied, CreatedSession, CreateSession, Handler, HandlerSet, NewScreen, Pop, Popped, Publish,
    Published, PushOperation, Pushed, Schema, SchemaPreferences, SchemaValues, Screen, Session, SetValuesOperation,
    StringEntry, ValuesPatch, ValuesUpdated)


def expect(value, kind, what):
    if not isinstance(value, kind):
        sys.exit(f"generated-client walk: {what}: expected {kind.__name__}, got {value!r}")
    return value


def check(condition, what):
    if not condition:
        sys.exit(f"generated-client walk: {what}")


def main(url):
    values = SchemaValues()
    values["text"] = StringEntry(type_="string", default="initial value")
    preferences = SchemaPreferences()
    preferences["preference"] = StringEntry(type_="string", default="")
    body = CreateSession(root=NewScreen(name="Root"), schema=Schema(values=values, preferences=preferences))
    created = expect(create_session.sync(client=Client(base_url=url), body=body), CreatedSession, "create")
    check(isinstance(created.schema.values["text"], StringEntry), "the schema reads back typed")
    session = AuthenticatedClient(base_url=url, token=created.token)
    sid = created.id

    # 1. The root reads the default; 2. a value typed on the root is read by a pushed screen.
    root = expect(get_screen.sync(sid, "root", client=session), Screen, "read the root")
    check(root.resolved["text"] == "initial value", f"the root reads the default: {root.resolved.to_dict()}")
    patch = ValuesPatch()
    patch["text"] = "hello"
    expect(update_values.sync(sid, "root", client=session, body=patch), ValuesUpdated, "set a value")
    pushed = expect(push_screen.sync(sid, client=session, body=NewScreen(name="Detail")), Pushed, "push")
    check(pushed.screen.resolved["text"] == "hello", f"the pushed screen reads forward: {pushed.screen.to_dict()}")

    # 5. A preference published on the pushed screen reaches the root, which keeps it after pop.
    expect(set_handler.sync(sid, "root", "preference", client=session, body=Handler(pass_back=True)),
           HandlerSet, "set a handler")
    published = expect(
        publish_preference.sync(sid, "top", "preference", client=session, body=Publish(value="chosen")),
        Published, "publish")
    check([d.screen for d in published.deliveries] == [root.id],
          f"the top has no handler, so it goes back to the root: {published.to_dict()}")
    popped = expect(pop_screens.sync(sid, client=session, body=Pop(count=1)), Popped, "pop")
    check(popped.popped == [pushed.screen.id], f"popped the pushed screen: {popped.to_dict()}")
    root = expect(get_screen.sync(sid, "root", client=session), Screen, "read the root again")
    check(root.preferences["preference"] == "chosen", f"the root kept the preference: {root.to_dict()}")

    # A typed batch: two pushes and a value on the new top screen, as one event.
    top = SetValuesOperation(op="setValues", screen="top", values=ValuesPatch.from_dict({"text": "item"}))
    batch = Batch(operations=[PushOperation(op="push", name="List"), PushOperation(op="push", name="Item"), top])
    applied = expect(apply_batch.sync(sid, client=session, body=batch), BatchApplied, "batch")
    final = expect(get_session.sync(sid, client=session), Session, "read the session")
    check(final.version == applied.version, f"one version for the batch: {final.version} vs {applied.version}")
    check([s.name for s in final.screens] == ["Root", "List", "Item"], f"the batch's screens: {final.to_dict()}")
    check(final.screens[-1].resolved["text"] == "item", "the batch's value on the top screen")
    print(f"generated-client walk: ok (session {sid} at version {final.version})")


if __name__ == "__main__":
    main(sys.argv[1])
