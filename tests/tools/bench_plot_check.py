# SPDX-License-Identifier: Apache-2.0
"""tests/tools/bench_plot_check.py PLD PLOT_PY

bench/plot.py on real `pld bench --csv` output (thread and process
transports, allgather with both column groups and allreduce) and on a
compare.sh table naming its MPI library: both SVGs are written, are
well-formed XML, and hold a panel per collective and P and a legend line
per transport and per MPI library. Skipped (status 77) without matplotlib,
which is optional."""

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SKIP = 77


def main():
    pld, plot = sys.argv[1], sys.argv[2]
    # this interpreter, or the system's (a pyenv or venv python often lacks
    # the distribution's python3-matplotlib)
    python = None
    for cand in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(cand) and subprocess.run(
                [cand, "-c", "import matplotlib"], stderr=subprocess.DEVNULL).returncode == 0:
            python = cand
            break
    if not python:
        print("SKIP: matplotlib not installed (python3-matplotlib); bench/plot.py not tested")
        return SKIP
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        csvs = []
        for t in ("thread", "process"):
            path = os.path.join(tmp, f"{t}.csv")
            for coll in ("allgather", "allreduce"):
                part = f"{path}.{coll}"
                subprocess.run([pld, "bench", coll, "-d", "0,1", "-b", "4K", "-e", "64K", "-f", "4",
                                "-n", "3", "-w", "1", "--warmup-ms", "1", "--transport", t,
                                "--csv", part], check=True, stdout=subprocess.DEVNULL)
                with open(part) as f, open(path, "a") as out:
                    lines = f.readlines()
                    out.writelines(lines if coll == "allgather" else lines[1:])
            csvs.append(path)
        cmp = os.path.join(tmp, "compare.csv")
        with open(cmp, "w") as f:  # compare.sh's table: one row per (collective, P, size)
            f.write("collective,P,size,thread_us,process_us,mpi_us,thread_over_mpi,"
                    "process_over_mpi\n")
            for p in (2, 4):
                for size in (4096, 65536, 1048576):
                    f.write(f"allgather,{p},{size},{size / 4e3},{size / 3e3},{size / 2e3},"
                            f"0.50,0.67\n")
                f.write(f"barrier,{p},0,0.3,0.4,0.5,0.60,0.80\n")
        out = os.path.join(tmp, "svg")
        r = subprocess.run([python, plot, "-o", out, "-n", "t"] + csvs +
                           ["Open MPI 4.1=" + cmp], stdout=subprocess.PIPE, text=True)
        print(r.stdout)
        if r.returncode != 0:
            fails.append(f"plot.py exit status {r.returncode}")
        want = {"t-busbw.svg": ["pld thread", "pld process", "Open MPI 4.1", "allgather, P=2",
                                "allgather_inplace, P=2", "allreduce, P=2", "allgather, P=4"],
                "t-ratio.svg": ["pld thread / Open MPI 4.1", "pld process / Open MPI 4.1",
                                "barrier, P=4", "allgather, P=2"]}
        for name, texts in want.items():
            path = os.path.join(out, name)
            if not os.path.exists(path):
                fails.append(f"{name} not written")
                continue
            try:
                root = ET.parse(path).getroot()
            except ET.ParseError as e:
                fails.append(f"{name}: not well-formed XML: {e}")
                continue
            got = {"".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")}
            for t in texts:
                if t not in got:
                    fails.append(f"{name}: no text '{t}'")
    for f in fails:
        print("FAIL:", f)
    print("FAILED" if fails else "PASS")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
