"""The GUI-free core must import no GUI module, so `mjrig run` works with no screen."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CODE = """
import sys
import mjrig.cli
import mjrig.runtime, app.scenario, app.headless, app.cli, app.bundled
from mjrig.cli import main
main(["check", "models/spring_mass.toml"])
bad = sorted(m for m in sys.modules if m.split('.')[0] in ('dearpygui', 'glfw') or m.startswith('mujoco.viewer'))
print("GUI modules:", bad)
sys.exit(1 if bad else 0)
"""


def test_core_and_cli_import_no_gui_modules():
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "DISPLAY": ""}  # no screen: the CLI picks EGL and never loads glfw
    proc = subprocess.run([sys.executable, "-c", CODE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "GUI modules: []" in proc.stdout
