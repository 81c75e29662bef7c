# SpiderMonkey, Firefox's JavaScript engine, for tests/stack/engine_stacks_test.cc: Debian 12 has no
# package of the engine or of a shell that runs it, so PyPI's pythonmonkey (which embeds
# SpiderMonkey 115, with a wheel for Debian's Python 3.11) is installed into its own virtual
# environment, .deps/spidermonkey, every package pinned by scripts/setup.d/spidermonkey.txt.
# tests/stack/fixtures/run_spidermonkey.py runs a script in it.
# Sourced by scripts/setup.sh with `set -euo pipefail` and cwd = repo root. Idempotent: returns at
# once when the stamp of the pinned versions is present. Needs python3-venv (setup.sh installs it).
spidermonkey_dir=.deps/spidermonkey
spidermonkey_stamp="$spidermonkey_dir/.spidermonkey-$(md5sum <scripts/setup.d/spidermonkey.txt | cut -c1-12)"

if [[ ! -f "$spidermonkey_stamp" ]]; then
  rm -rf "$spidermonkey_dir"
  /usr/bin/python3 -m venv "$spidermonkey_dir" ||
    { echo "setup.d/spidermonkey.sh: cannot make a virtual environment (apt-get install python3-venv)" >&2; return 1; }
  "$spidermonkey_dir/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir \
    --requirement scripts/setup.d/spidermonkey.txt
  "$spidermonkey_dir/bin/python" -c "import pythonmonkey; pythonmonkey.eval('1 + 1')" >/dev/null
  touch "$spidermonkey_stamp"
fi
unset spidermonkey_dir spidermonkey_stamp
