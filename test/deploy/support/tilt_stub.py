# Runs the repo's Tiltfile under Python with stand-ins for Tilt's builtins and prints, as JSON,
# what it declared. Starlark is close to a subset of Python, so this exercises the Tiltfile's own
# logic (settings, genesis, objects, resources, buttons) where Tilt itself cannot be installed.
#
#   python3 tilt_stub.py '<json: {"args": {...}, "context": "kind-kind", "namespace": "ns"}>'
import json
import os
import subprocess
import sys

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
request = json.loads(sys.argv[1])
record = {'docker_builds': [], 'resources': [], 'local_resources': [], 'buttons': [], 'local': [],
          'allowed_contexts': [], 'yaml': [], 'config_defined': [], 'version_settings': None}


class TiltFail(Exception):
    pass


class Struct:
    def __init__(self, **fields):
        self.__dict__.update(fields)


def fail(message):
    raise TiltFail(message)


def version_settings(check_updates=True, constraint=''):
    record['version_settings'] = {'check_updates': check_updates, 'constraint': constraint}


def _define(kind):
    def define(name, args=False, usage=''):
        record['config_defined'].append({'kind': kind, 'name': name, 'usage': usage})
    return define


def _parse():
    known = {d['name'] for d in record['config_defined']}
    for name in request.get('args', {}):
        if name not in known:
            fail('unknown config flag --%s' % name)
    return dict(request.get('args', {}))


config = Struct(define_string=_define('string'), define_string_list=_define('string_list'),
                define_bool=_define('bool'), define_object=_define('object'), parse=_parse,
                main_dir=REPO, tilt_subcommand='up')


def k8s_context():
    return request.get('context', 'kind-kind')


def k8s_namespace():
    return request.get('namespace', 'default')


def allow_k8s_contexts(contexts):
    record['allowed_contexts'] += contexts if isinstance(contexts, list) else [contexts]


def read_yaml(path, default=None):
    with open(os.path.join(REPO, path)) as f:
        return yaml.safe_load(f)


def kustomize(path, kustomize_bin=None, flags=[]):
    built = request.get('kustomize_output', {}).get(path)
    if built is not None:  # the caller's own `kubectl kustomize` output, to save a build per run
        with open(built) as f:
            return f.read()
    return subprocess.run([request['kubectl'], 'kustomize', os.path.join(REPO, path)],
                          check=True, capture_output=True, text=True).stdout


def decode_yaml_stream(text):
    return [d for d in yaml.safe_load_all(text) if d is not None]


def encode_yaml_stream(objects):
    return yaml.safe_dump_all(objects)


def local(command, quiet=False, echo_off=False, env={}, dir='', stdin=None, command_bat=''):
    record['local'].append(command)
    return request.get('local_output', '{}')


def k8s_yaml(blob, allow_duplicates=False):
    record['yaml'] += decode_yaml_stream(blob)


def sync(local_path, remote_path):
    return {'sync': [local_path, remote_path]}


def docker_build(ref, context, **kwargs):
    record['docker_builds'].append(dict(ref=ref, context=context, **kwargs))


def port_forward(local_port, container_port=None, name=None, link_path=None, host=None):
    return {'local': local_port, 'container': container_port, 'name': name}


def link(url, name=None):
    return {'url': url, 'name': name}


def k8s_resource(workload='', **kwargs):
    record['resources'].append(dict(workload=workload, **kwargs))


def local_resource(name, cmd, **kwargs):
    record['local_resources'].append(dict(name=name, cmd=cmd, **kwargs))


def cmd_button(name, resource='', argv=[], text=None, location='resource', icon_name=None,
               icon_svg=None, inputs=[]):
    record['buttons'].append(dict(name=name, resource=resource, argv=argv, text=text,
                                  location=location, icon_name=icon_name))


tilt_globals = {
    'version_settings': version_settings, 'config': config, 'fail': fail, 'os': os,
    'k8s_context': k8s_context, 'k8s_namespace': k8s_namespace,
    'allow_k8s_contexts': allow_k8s_contexts, 'read_yaml': read_yaml, 'kustomize': kustomize,
    'decode_yaml_stream': decode_yaml_stream, 'encode_yaml_stream': encode_yaml_stream,
    'local': local, 'k8s_yaml': k8s_yaml, 'sync': sync, 'docker_build': docker_build,
    'port_forward': port_forward, 'link': link, 'k8s_resource': k8s_resource,
    'local_resource': local_resource, 'TRIGGER_MODE_MANUAL': 'manual', 'TRIGGER_MODE_AUTO': 'auto',
}


def load(path, *names):
    if path != 'ext://uibutton':
        fail('unexpected load of %s' % path)
    extension = {'cmd_button': cmd_button, 'location': Struct(RESOURCE='resource', NAV='nav')}
    for name in names:
        tilt_globals[name] = extension[name]


tilt_globals['load'] = load

os.chdir(REPO)
with open(os.path.join(REPO, 'Tiltfile')) as f:
    source = f.read()
try:
    exec(compile(source, 'Tiltfile', 'exec'), tilt_globals)
    record['failed'] = None
except TiltFail as error:
    record['failed'] = str(error)
print(json.dumps(record))
