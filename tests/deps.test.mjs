// scripts/deps.sh on every system it knows, here, with stand-in package
// managers: PATH holds only stubs (apt-get, apt-cache, dpkg-query, dnf, rpm,
// pacman, apk, brew, sudo, id, uname, pkg-config) and the few real tools the
// script uses, so what it would install, how it detects the system, and what
// it says about a libwebsockets without libuv support are all seen, and
// nothing is ever installed.
//
//   node --test tests/deps.test.mjs   (run from anywhere)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '..', 'scripts', 'deps.sh');
const root = mkdtempSync(join(tmpdir(), 'telescope-deps-'));
process.on('exit', () => rmSync(root, { recursive: true, force: true }));
const bin = join(root, 'bin'), nodeBin = join(root, 'node-bin'), ranLog = join(root, 'ran.log');
mkdirSync(bin); mkdirSync(nodeBin);

const stub = (dir, name, body) => {
  writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
  chmodSync(join(dir, name), 0o755);
};
// A package is installed when its name is in STUB_INSTALLED, in the index
// when in STUB_AVAILABLE. Installers only log that they ran.
const has = (v) => `case " $${v} " in *" $last "*) exit 0;; esac; exit 1`;
const lastArg = 'for last; do :; done';
stub(bin, 'dpkg-query', `${lastArg}\ncase " $STUB_INSTALLED " in *" $last "*) printf 'install ok installed'; exit 0;; esac; exit 1`);
stub(bin, 'apt-cache', `${lastArg}\n${has('STUB_AVAILABLE')}`);
for (const q of ['rpm', 'pacman', 'apk', 'brew']) {
  const installer = { rpm: null, pacman: '-S', apk: 'add', brew: 'install' }[q];
  stub(bin, q, `${lastArg}\n${installer ? `[ "$1" = ${installer} ] && { echo "${q} $*" >> "${ranLog}"; exit 0; }\n` : ''}${has('STUB_INSTALLED')}`);
}
for (const installer of ['apt-get', 'dnf']) stub(bin, installer, `echo "${installer} $*" >> "${ranLog}"`);
stub(bin, 'env', `echo "env $*" >> "${ranLog}"`);
stub(bin, 'sudo', '[ "$1" = -n ] && exit "${STUB_SUDO_FAILS:-0}"; exec "$@"');
stub(bin, 'id', 'echo "${STUB_UID:-0}"');
stub(bin, 'uname', 'echo "${STUB_UNAME:-Linux}"');
stub(bin, 'pkg-config', `case "$1" in
  --variable=includedir) [ -n "$STUB_LWS_INCLUDEDIR" ] && echo "$STUB_LWS_INCLUDEDIR" && exit 0 ;;
  --variable=libdir) [ -n "$STUB_LWS_LIBDIR" ] && echo "$STUB_LWS_LIBDIR" && exit 0 ;;
esac
exit 1`);
stub(nodeBin, 'node', 'exit 0');
stub(nodeBin, 'npm', 'exit 0');
// The real tools the script itself uses.
for (const tool of ['sh', 'grep', 'sed', 'cat']) {
  const real = execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
  symlinkSync(real, join(bin, tool));
}

function deps(group, env = {}, { node = false } = {}) {
  rmSync(ranLog, { force: true });
  const r = spawnSync(join(bin, 'sh'), [SCRIPT, group], {
    encoding: 'utf8',
    env: { PATH: node ? `${bin}:${nodeBin}` : bin, TELESCOPE_DEPS_DRY_RUN: '1',
           TELESCOPE_OS_RELEASE: join(root, 'no-os-release'), STUB_INSTALLED: '', STUB_AVAILABLE: '', ...env },
  });
  const ran = existsSync(ranLog) ? readFileSync(ranLog, 'utf8') : '';
  return { rc: r.status, out: r.stdout, err: r.stderr, ran };
}
const lines = (out) => out.split('\n').filter((l) => l && !l.startsWith('#'));

// What a fresh machine of each system gets from `make deps` (build, demo,
// test in turn), as root, libwebsockets' plugin in the index where it exists.
const FRESH = {
  debian: [['apt-get update',
            'env DEBIAN_FRONTEND=noninteractive apt-get install -y build-essential cmake pkg-config libjansson-dev libuv1-dev libwebsockets-dev libwebsockets-evlib-uv'],
           ['apt-get update', 'env DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm'],
           ['apt-get update', 'env DEBIAN_FRONTEND=noninteractive apt-get install -y check valgrind clang libclang-rt-14-dev chromium']],
  ubuntu: [['apt-get update',
            'env DEBIAN_FRONTEND=noninteractive apt-get install -y build-essential cmake pkg-config libjansson-dev libuv1-dev libwebsockets-dev libwebsockets-evlib-uv'],
           ['apt-get update', 'env DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm'],
           ['apt-get update', 'env DEBIAN_FRONTEND=noninteractive apt-get install -y check valgrind clang libclang-rt-14-dev chromium']],
  fedora: [['dnf install -y gcc make cmake pkgconf-pkg-config jansson-devel libuv-devel libwebsockets-devel'],
           ['dnf install -y nodejs npm'], ['dnf install -y check-devel valgrind clang chromium']],
  arch: [['pacman -S --needed --noconfirm base-devel cmake pkgconf jansson libuv libwebsockets'],
         ['pacman -S --needed --noconfirm nodejs npm'], ['pacman -S --needed --noconfirm check valgrind clang chromium']],
  alpine: [['apk add build-base cmake pkgconf jansson-dev libuv-dev libwebsockets-dev libwebsockets-evlib_uv'],
           ['apk add nodejs npm'], ['apk add check-dev valgrind clang chromium']],
  macos: [['brew install cmake pkg-config jansson libuv libwebsockets'], ['brew install node'], ['brew install check']],
};
const INDEX = 'libwebsockets-evlib-uv libclang-rt-14-dev chromium';

for (const [os, want] of Object.entries(FRESH)) {
  test(`${os}: the dry run prints the commands that install each group, and runs none`, () => {
    ['build', 'demo', 'test'].forEach((group, i) => {
      const r = deps(group, { TELESCOPE_OS: os, STUB_AVAILABLE: INDEX });
      assert.equal(r.rc, 0, r.err);
      assert.deepEqual(lines(r.out), want[i], `${os} ${group}`);
      assert.equal(r.ran, '', `${os} ${group}: something was run in a dry run`);
    });
  });
}

test('macOS: the three groups together are the one brew line the issue names', () => {
  const all = ['build', 'demo', 'test'].flatMap((g) => lines(deps(g, { TELESCOPE_OS: 'macos' }).out));
  const pkgs = all.map((l) => l.replace(/^brew install /, '')).join(' ').split(' ');
  assert.deepEqual(pkgs.sort(), 'cmake pkg-config jansson libuv libwebsockets check node'.split(' ').sort());
});

test('not root: the commands go through sudo; without password-less sudo they are printed and it fails', () => {
  const dry = deps('build', { TELESCOPE_OS: 'fedora', STUB_UID: '1000' });
  assert.deepEqual(lines(dry.out), ['sudo dnf install -y gcc make cmake pkgconf-pkg-config jansson-devel libuv-devel libwebsockets-devel']);
  const brew = deps('build', { TELESCOPE_OS: 'macos', STUB_UID: '501' });
  assert.deepEqual(lines(brew.out), ['brew install cmake pkg-config jansson libuv libwebsockets'], 'brew never through sudo');
  const real = deps('demo', { TELESCOPE_OS: 'alpine', STUB_UID: '1000', STUB_SUDO_FAILS: '1', TELESCOPE_DEPS_DRY_RUN: '' });
  assert.equal(real.rc, 1);
  assert.match(real.err, /missing packages: nodejs npm\n.*run:\n  sudo apk add nodejs npm/s);
  assert.equal(real.ran, '');
});

test('a real run executes exactly the commands the dry run prints', () => {
  for (const os of ['debian', 'fedora', 'arch', 'alpine', 'macos']) {
    const dry = lines(deps('demo', { TELESCOPE_OS: os }).out);
    const real = deps('demo', { TELESCOPE_OS: os, TELESCOPE_DEPS_DRY_RUN: '' });
    assert.equal(real.rc, 0, real.err);
    assert.deepEqual(real.ran.trim().split('\n'), dry, os);
  }
});

test('what is installed is not asked for; a node on PATH counts; nothing missing prints nothing to run', () => {
  const r = deps('build', { TELESCOPE_OS: 'debian', STUB_INSTALLED: 'cmake libuv1-dev', STUB_AVAILABLE: INDEX });
  assert.deepEqual(lines(r.out)[1].split(' ').slice(5), ['build-essential', 'pkg-config', 'libjansson-dev', 'libwebsockets-dev', 'libwebsockets-evlib-uv']);
  const n = deps('demo', { TELESCOPE_OS: 'arch' }, { node: true });
  assert.deepEqual(lines(n.out), []);
  assert.match(n.out, /# nothing missing for demo on arch/);
  const t = deps('test', { TELESCOPE_OS: 'macos', STUB_INSTALLED: 'check' });
  assert.deepEqual(lines(t.out), []);
});

test('Ubuntu 22.04: no libwebsockets-evlib-uv in the index (its 4.0 has libuv built in), so none is asked for', () => {
  const r = deps('build', { TELESCOPE_OS: 'ubuntu', STUB_AVAILABLE: '' });
  assert.doesNotMatch(r.out, /evlib/);
  assert.match(lines(r.out)[1], / libwebsockets-dev$/);
});

test('detection: os-release ID, then ID_LIKE; uname Darwin is macOS; an unknown system is refused', () => {
  const cases = [['ID=debian', 'debian'], ['ID=ubuntu\nID_LIKE=debian', 'ubuntu'],
                 ['ID=linuxmint\nID_LIKE="ubuntu debian"', 'ubuntu'], ['ID=fedora', 'fedora'],
                 ['ID="rocky"\nID_LIKE="rhel centos fedora"', 'fedora'], ['ID=arch', 'arch'],
                 ['ID=manjaro\nID_LIKE=arch', 'arch'], ['ID=alpine', 'alpine']];
  for (const [release, os] of cases) {
    const f = join(root, `os-release-${os}`);
    writeFileSync(f, `NAME="x"\n${release}\nVERSION_ID="1"\n`);
    const r = deps('demo', { TELESCOPE_OS_RELEASE: f });
    assert.equal(r.rc, 0, r.err);
    assert.deepEqual(lines(r.out), lines(deps('demo', { TELESCOPE_OS: os }).out), release);
  }
  const mac = deps('demo', { STUB_UNAME: 'Darwin' });
  assert.deepEqual(lines(mac.out), ['brew install node']);
  const f = join(root, 'os-release-void');
  writeFileSync(f, 'ID=void\n');
  const r = deps('build', { TELESCOPE_OS_RELEASE: f });
  assert.equal(r.rc, 2);
  assert.match(r.err, /unknown system 'void'/);
  assert.equal(deps('everything', { TELESCOPE_OS: 'debian' }).rc, 2);
});

// libwebsockets' own configuration header, as pkg-config finds it.
function lws(name, defines, plugin) {
  const dir = join(root, name);
  mkdirSync(join(dir, 'include'), { recursive: true });
  mkdirSync(join(dir, 'lib'), { recursive: true });
  writeFileSync(join(dir, 'include', 'lws_config.h'), defines.map((d) => `#define ${d}\n`).join('') + '/* #undef LWS_WITH_LIBUV_INTERNAL */\n');
  if (plugin) writeFileSync(join(dir, 'lib', 'libwebsockets-evlib_uv.so'), '');
  return { STUB_LWS_INCLUDEDIR: join(dir, 'include'), STUB_LWS_LIBDIR: join(dir, 'lib'), STUB_INSTALLED: FRESH_INSTALLED };
}
const FRESH_INSTALLED = 'build-essential cmake pkg-config libjansson-dev libuv1-dev libwebsockets-dev libwebsockets-evlib-uv ' +
  'gcc make pkgconf-pkg-config jansson-devel libuv-devel libwebsockets-devel base-devel pkgconf jansson libuv libwebsockets ' +
  'build-base jansson-dev libuv-dev libwebsockets-dev libwebsockets-evlib_uv';

test('libwebsockets without libuv support is reported, with the fix', () => {
  const none = lws('no-libuv', ['LWS_LIBRARY_VERSION "4.3.2"', 'LWS_WITH_EVLIB_PLUGINS'], false);
  for (const os of ['fedora', 'alpine', 'debian']) {
    const r = deps('build', { TELESCOPE_OS: os, ...none });
    assert.equal(r.rc, 1, `${os}: ${r.out}`);
    assert.match(r.err, /built without libuv support/);
    assert.match(r.err, /-DLWS_WITH_LIBUV=ON/);
  }
});

test('libuv support as a plugin: the plugin file must be there (Debian: libwebsockets-evlib-uv)', () => {
  const noPlugin = lws('plugin-missing', ['LWS_WITH_LIBUV', 'LWS_WITH_EVLIB_PLUGINS'], false);
  const deb = deps('build', { TELESCOPE_OS: 'debian', ...noPlugin });
  assert.equal(deb.rc, 1);
  assert.match(deb.err, /libwebsockets-evlib_uv,\n.*not in .*plugin-missing\/lib/);
  assert.match(deb.err, /apt-get install libwebsockets-evlib-uv/);
  const alpine = deps('build', { TELESCOPE_OS: 'alpine', ...noPlugin });
  assert.equal(alpine.rc, 1);
  assert.match(alpine.err, /apk add libwebsockets-evlib_uv/);
  const arch = deps('build', { TELESCOPE_OS: 'arch', ...noPlugin });
  assert.equal(arch.rc, 1);
  assert.match(arch.err, /-DLWS_WITH_LIBUV=ON -DLWS_WITH_EVLIB_PLUGINS=OFF/);
  const ok = deps('build', { TELESCOPE_OS: 'debian', ...lws('plugin-there', ['LWS_WITH_LIBUV', 'LWS_WITH_EVLIB_PLUGINS'], true) });
  assert.equal(ok.rc, 0, ok.err);
});

test('libuv built in (no plugins, as lws 4.0 or -DLWS_WITH_EVLIB_PLUGINS=OFF): accepted', () => {
  const r = deps('build', { TELESCOPE_OS: 'macos', ...lws('static', ['LWS_WITH_LIBUV'], false),
                            STUB_INSTALLED: 'cmake pkg-config jansson libuv libwebsockets' });
  assert.equal(r.rc, 0, r.err);
  assert.deepEqual(lines(r.out), []);
});

test('before libwebsockets is installed, the dry run says its check comes after', () => {
  const r = deps('build', { TELESCOPE_OS: 'alpine' });
  assert.match(r.out, /# libwebsockets is not installed yet/);
});

// CMakeLists.txt's own check (cmake/lws_libuv.cmake) on the same four kinds
// of libwebsockets: a configure stops where the build could not run.
test('cmake/lws_libuv.cmake: refuses no libuv, and a missing plugin; accepts the plugin there, or libuv built in', () => {
  const LIST = join(dirname(SCRIPT), '..', 'cmake', 'lws_libuv.cmake');
  const check = (name, defines, plugin) => {
    const e = lws(`cmake-${name}`, defines, plugin);
    return spawnSync('cmake', [`-DLWS_CONFIG_H=${e.STUB_LWS_INCLUDEDIR}/lws_config.h`,
                               `-DLWS_PLUGIN_DIRS=/nonexistent;${e.STUB_LWS_LIBDIR}`, '-P', LIST], { encoding: 'utf8' });
  };
  const none = check('none', ['LWS_WITH_EVLIB_PLUGINS'], false);
  assert.notEqual(none.status, 0);
  assert.match(none.stderr, /built without libuv support/);
  const missing = check('missing', ['LWS_WITH_LIBUV', 'LWS_WITH_EVLIB_PLUGINS'], false);
  assert.notEqual(missing.status, 0);
  assert.match(missing.stderr, /apt-get install\s+libwebsockets-evlib-uv/);
  for (const [name, defines, plugin] of [['there', ['LWS_WITH_LIBUV', 'LWS_WITH_EVLIB_PLUGINS'], true],
                                         ['static', ['LWS_WITH_LIBUV'], false]]) {
    const r = check(name, defines, plugin);
    assert.equal(r.status, 0, `${name}: ${r.stderr}`);
    assert.match(r.stderr, /libuv support: ok/);
  }
});
