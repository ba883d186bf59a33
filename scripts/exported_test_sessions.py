"""Random multi-stack sessions on a live server, for scripts/check-exported-tests.sh.

    python3 exported_test_sessions.py URL COUNT SEED STEPS

Creates COUNT sessions (a schema with defaults), each changed by STEPS random requests: pushes,
pops, paths, values (strings with quotes, backslashes, triple quotes, #, \\( and non-ASCII text),
handlers, publishes, tabs (added, selected, moved, removed), presentations (sheets and full-screen
covers, nested, dismissed), replacements above a screen, returns and batches. A request the
server refuses with 404, 409 or 422 (a pop with nothing above the root) is part of the game; any
other status fails the run. Prints one line per session: its id and token, separated by a space.
"""

import json
import random
import sys
import urllib.error
import urllib.request

NASTY = [
    'plain', 'quote " inside', 'back\\slash', 'triple """ quotes', 'hash #"raw"#', 'interp \\(x)',
    'line\nbreak', 'tab\there', 'e\u0301 caf\u00e9', '\u202eright-to-left', 'emoji \U0001F600', '', 'nul-ish \u0001',
]
KEYS = ['title', 'count', 'theme', 'note.x', 'k-1']
PREFERENCES = ['selection', 'done_now']


class Session:
    def __init__(self, url, rng):
        self.url = url
        self.rng = rng
        schema = {
            'values': {
                'title': {'type': 'string', 'default': 'untitled "x"'},
                'count': {'type': 'integer', 'default': 0},
                'theme': {'type': 'any', 'default': {'dark': False, 'tags': ['a', 'b\\c']}},
            },
            'preferences': {},
            'strict': False,
        }
        # The root's values must fit the schema's types, or creation is refused (422) and there is no
        # session to change; later requests may be refused, and are, as a check of the refusals.
        root_values = {key: value for key, value in self.values().items() if fits(key, value)}
        created = self.call('POST', '/v1/sessions', {'root': {'name': 'Home', 'values': root_values}, 'schema': schema})
        self.id = created['id']
        self.token = created['token']

    def call(self, method, path, body=None, refusable=False):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header('Content-Type', 'application/json')
        if getattr(self, 'token', None):
            request.add_header('Authorization', 'Bearer ' + self.token)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                text = answer.read()
                return json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            if refusable and error.code in (404, 409, 422):
                return None
            raise SystemExit(f'{method} {path}: {error.code} {error.read().decode(errors="replace")}')

    def value(self):
        pick = self.rng.random()
        if pick < 0.5:
            return self.rng.choice(NASTY)
        if pick < 0.7:
            return self.rng.randint(-5, 1_000_000)
        if pick < 0.8:
            return self.rng.choice([0.5, -1.25, 1e-7, 3.0e20])
        if pick < 0.9:
            return {self.rng.choice(NASTY): [self.rng.choice(NASTY), True, None]}
        return self.rng.choice([True, False, None, []])

    def values(self):
        return {self.rng.choice(KEYS): self.value() for _ in range(self.rng.randint(0, 2))}

    def screen(self):
        return {'name': self.rng.choice(NASTY + ['Detail', 'Picker']), 'values': self.values()}

    def state(self):
        return self.call('GET', f'/v1/sessions/{self.id}/stacks')

    def any_screen(self):
        stacks = self.state()['stacks']
        screens = [screen['id'] for stack in stacks for screen in stack['screens']]
        return self.rng.choice(screens)

    def operation(self):
        """One random operation as a batch holds it."""
        r = self.rng
        choice = r.choice([
            'push', 'push', 'pushOther', 'pop', 'replacePath', 'setValues', 'setValues', 'setHandler', 'setHandler',
            'removeHandler', 'publish', 'publish', 'createStack', 'selectStack', 'moveStack', 'removeStack',
            'present', 'present', 'dismiss', 'replaceAbove', 'return',
        ])
        state = self.state()
        stacks = [stack['id'] for stack in state['stacks']]
        tabs = [stack['id'] for stack in state['stacks'] if stack['kind'] == 'tab']
        presentations = [stack['id'] for stack in state['stacks'] if stack['kind'] in ('sheet', 'fullScreenCover')]
        screen = self.any_screen()
        key = r.choice(PREFERENCES)
        if choice == 'push':
            return dict(op='push', **self.screen())
        if choice == 'pushOther':
            return dict(op='push', stack=r.choice(stacks), **self.screen())
        if choice == 'pop':
            return {'op': 'pop', 'stack': r.choice(stacks), 'count': r.randint(1, 2)}
        if choice == 'replacePath':
            return {'op': 'replacePath', 'stack': r.choice(stacks), 'screens': [self.screen() for _ in range(r.randint(0, 2))]}
        if choice == 'setValues':
            values = self.values() or {r.choice(KEYS): self.value()}
            if r.random() < 0.3:
                values[r.choice(KEYS)] = None  # removes the override
            return {'op': 'setValues', 'screen': screen, 'values': values}
        if choice == 'setHandler':
            return {'op': 'setHandler', 'screen': screen, 'key': key, 'passBack': r.random() < 0.6}
        if choice == 'removeHandler':
            return {'op': 'removeHandler', 'screen': screen, 'key': key}
        if choice == 'publish':
            return {'op': 'publish', 'screen': screen, 'key': key, 'value': self.value()}
        if choice == 'return':
            return {'op': 'return', 'screen': screen, 'key': key, 'value': self.value()}
        if choice == 'createStack':
            return {'op': 'createStack', 'id': r.choice(['search', 'inbox', 'tab_3']), 'root': self.screen()}
        if choice == 'selectStack':
            return {'op': 'selectStack', 'stack': r.choice(['main'] + tabs)}
        if choice == 'moveStack':
            return {'op': 'moveStack', 'stack': r.choice(tabs or ['main']), 'position': r.randint(0, 2)}
        if choice == 'removeStack':
            return {'op': 'removeStack', 'stack': r.choice(tabs or ['main'])}
        if choice == 'present':
            return {'op': 'present', 'from': r.choice(['top', screen]), 'style': r.choice(['sheet', 'fullScreenCover']),
                    'root': self.screen()}
        if choice == 'dismiss':
            return {'op': 'dismiss', 'stack': r.choice(presentations or ['main'])}
        return {'op': 'replaceAbove', 'screen': screen, 'screens': [self.screen() for _ in range(r.randint(0, 2))]}

    def step(self):
        """One operation, through its own endpoint or, now and then, in a batch of a few."""
        if self.rng.random() < 0.15:
            operations = [self.operation() for _ in range(self.rng.randint(2, 3))]
            self.call('POST', f'/v1/sessions/{self.id}/batch', {'operations': operations}, refusable=True)
            return
        op = self.operation()
        kind = op.pop('op')
        s = f'/v1/sessions/{self.id}'
        routes = {
            'push': lambda: ('POST', f'{s}/stacks/{quote(op.pop("stack", "main"))}/push', op),
            'pop': lambda: ('POST', f'{s}/stacks/{quote(op.pop("stack"))}/pop', op),
            'replacePath': lambda: ('PUT', f'{s}/stacks/{quote(op.pop("stack"))}/path', op),
            'setValues': lambda: ('PATCH', f'{s}/screens/{op["screen"]}/values', op['values']),
            'setHandler': lambda: ('PUT', f'{s}/screens/{op["screen"]}/handlers/{quote(op["key"])}', {'passBack': op['passBack']}),
            'removeHandler': lambda: ('DELETE', f'{s}/screens/{op["screen"]}/handlers/{quote(op["key"])}', None),
            'publish': lambda: ('POST', f'{s}/screens/{op["screen"]}/preferences/{quote(op["key"])}', {'value': op['value']}),
            'return': lambda: ('POST', f'{s}/screens/{op.pop("screen")}/return', op),
            'createStack': lambda: ('POST', f'{s}/stacks', op),
            'selectStack': lambda: ('POST', f'{s}/select', op),
            'moveStack': lambda: ('POST', f'{s}/stacks/{quote(op.pop("stack"))}/move', op),
            'removeStack': lambda: ('DELETE', f'{s}/stacks/{quote(op["stack"])}', None),
            'present': lambda: ('POST', f'{s}/present', op),
            'dismiss': lambda: ('POST', f'{s}/dismiss', op),
            'replaceAbove': lambda: ('PUT', f'{s}/screens/{op.pop("screen")}/above', op),
        }
        method, path, body = routes[kind]()
        self.call(method, path, body, refusable=True)


def fits(key, value):
    """Whether a value fits the type the sessions' schema declares for its key."""
    if key == 'title':
        return isinstance(value, str)
    if key == 'count':
        return isinstance(value, int) and not isinstance(value, bool)
    return True


def quote(text):
    return urllib.request.quote(text, safe='')


def main():
    url, count, seed, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    for _ in range(count):
        session = Session(url, rng)
        for _ in range(steps):
            session.step()
        print(session.id, session.token)


if __name__ == '__main__':
    main()
