#!/usr/bin/env python3
"""Chaos for `cohort sync`: ten editors append lines to their own and to shared files, and sync at
once, round after round, while this script kills syncs with SIGKILL at random moments and at every
journal point (COHORT_SYNC_FAULT). Through a folder remote with Cohort's hook, and through
`cohort serve`. At the end every editor syncs until all agree, and the script counts every line it
wrote in a fresh clone of the collaboration.

    python3 Scripts/chaos-sync.py [--kills 200] [--editors 10] [--transport folder|serve|both] [--cohort PATH]

Exit status 0 when, for each transport: 0 lines lost, 0 syncs left blocked, every sync that was not
killed landed (exit 0), `git fsck` clean on the remote and in every workspace, `cohort verify` ok.
"""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FAULT_POINTS = ["after-commit", "after-fetch", "after-merge-commit", "after-journal", "after-branch-move",
                "mid-checkout", "after-checkout", "after-push"]


def run(args, home=None, cwd=None, check=True, env=None):
    environment = dict(os.environ, **(env or {}))
    if home:
        environment["COHORT_HOME"] = home
    result = subprocess.run(args, cwd=cwd, env=environment, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise SystemExit(f"failed: {' '.join(args)}\n{result.stdout}{result.stderr}")
    return result


class Chaos:
    def __init__(self, cohort, work, transport, editors, kills, seed):
        self.cohort, self.work, self.transport = cohort, work, transport
        self.editors, self.target_kills = editors, kills
        self.random = random.Random(seed)
        self.ledger = []          # every line written, to be found at the end
        self.kills = 0
        self.failed_unkilled = []  # syncs that were not killed and did not exit 0
        self.syncs = 0
        self.server = None

    def home(self, name):
        return os.path.join(self.work, "homes", name)

    def setup(self):
        for name in ["ann", "bo", "cy"]:
            run([self.cohort, "id", "init", "--handle", f"{name}@example.com", "--name", name.title()], home=self.home(name))
            run([self.cohort, "id", "card", "--output", os.path.join(self.work, f"{name}.json")], home=self.home(name))
        owner = os.path.join(self.work, "ann-ws")
        os.makedirs(owner)
        with open(os.path.join(owner, "README.md"), "w") as f:
            f.write("chaos\n")
        run([self.cohort, "start", owner, "--title", "Chaos"], home=self.home("ann"))
        run([self.cohort, "participants", "add", os.path.join(self.work, "bo.json"), os.path.join(self.work, "cy.json"),
             "--workspace", owner], home=self.home("ann"))
        if self.transport == "folder":
            remote = os.path.join(self.work, "remote.git")
            run(["git", "init", "-q", "--bare", remote])
            run([self.cohort, "hook", "install", remote], home=self.home("ann"))
            run(["git", "-C", owner, "remote", "add", "origin", remote])
            run([self.cohort, "sync", "--workspace", owner], home=self.home("ann"))
            self.source = remote
        else:
            data = os.path.join(self.work, "data")
            log = open(os.path.join(self.work, "serve.log"), "w")
            self.server = subprocess.Popen([self.cohort, "serve", "--data", data, "--listen", "127.0.0.1:0"],
                                           stdout=subprocess.PIPE, stderr=log, text=True,
                                           env=dict(os.environ, COHORT_HOME=self.home("ann")))
            line = self.server.stdout.readline()
            url = line.strip().split("listening on ")[-1].split(" ")[0]
            published = run([self.cohort, "publish", url, "--workspace", owner], home=self.home("ann"))
            self.source = published.stdout.strip()
        self.folders = []
        for index in range(self.editors):
            folder = os.path.join(self.work, f"editor-{index}")
            run([self.cohort, "clone", self.source, folder], home=self.home(self.person(index)))
            self.folders.append(folder)

    def person(self, index):
        return "bo" if index % 2 == 0 else "cy"

    def write(self, round_):
        for index, folder in enumerate(self.folders):
            for name in [f"editor-{index}.md", f"shared-{index % 3}.md"]:
                line = f"{self.transport} round {round_} editor {index} in {name}"
                with open(os.path.join(folder, name), "a") as f:
                    f.write(line + "\n")
                self.ledger.append(line)

    def round(self, round_):
        processes = []
        for index, folder in enumerate(self.folders):
            env = {}
            plan = self.random.random()
            if plan < 0.25:
                env["COHORT_SYNC_FAULT"] = self.random.choice(FAULT_POINTS)
            process = subprocess.Popen([self.cohort, "sync", "--workspace", folder, "--wait", "120"],
                                       env=dict(os.environ, COHORT_HOME=self.home(self.person(index)), **env),
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            kill_at = time.monotonic() + self.random.uniform(0.05, 1.5) if 0.25 <= plan < 0.55 else None
            processes.append((index, process, kill_at))
        pending = list(processes)
        while pending:
            now = time.monotonic()
            for item in list(pending):
                index, process, kill_at = item
                if process.poll() is not None:
                    pending.remove(item)
                elif kill_at is not None and now >= kill_at:
                    process.send_signal(signal.SIGKILL)
            time.sleep(0.01)
        for index, process, kill_at in processes:
            out, err = process.communicate()
            self.syncs += 1
            if process.returncode == -signal.SIGKILL:
                self.kills += 1
            elif process.returncode != 0:
                self.failed_unkilled.append(f"editor {index}: exit {process.returncode}: {err.strip()[:300]}")

    def converge(self):
        """Every editor syncs until a whole pass changes nothing and all exit 0."""
        blocked = []
        for _ in range(4):
            blocked = []
            for index, folder in enumerate(self.folders):
                result = run([self.cohort, "sync", "--workspace", folder], home=self.home(self.person(index)), check=False)
                if result.returncode != 0:
                    blocked.append(f"editor {index}: {result.stderr.strip()[:300]}")
            tips = {run(["git", "-C", folder, "rev-parse", "HEAD"]).stdout for folder in self.folders}
            if not blocked and len(tips) == 1:
                break
        return blocked

    def check(self):
        final = os.path.join(self.work, "final")
        run([self.cohort, "clone", self.source, final], home=self.home("ann"))
        text = []
        for root, dirs, files in os.walk(final):
            dirs[:] = [d for d in dirs if d != ".git"]
            for name in files:
                with open(os.path.join(root, name), errors="replace") as f:
                    text.append(f.read())
        everything = "\n".join(text)
        lost = [line for line in self.ledger if line not in everything]
        fsck = []
        for folder in self.folders + [final] + ([self.source] if self.transport == "folder" else []):
            result = run(["git", "-C", folder, "fsck", "--no-progress"], check=False)
            if result.returncode != 0:
                fsck.append(f"{folder}: {result.stderr.strip()[:200]}")
        verified = run([self.cohort, "verify", "--workspace", final], home=self.home("ann"), check=False)
        dirty = [folder for folder in self.folders if run(["git", "-C", folder, "status", "--porcelain"]).stdout.strip()]
        return lost, fsck, verified, dirty

    def main(self):
        self.setup()
        round_ = 0
        started = time.monotonic()
        while self.kills < self.target_kills:
            round_ += 1
            self.write(round_)
            self.round(round_)
        blocked = self.converge()
        lost, fsck, verified, dirty = self.check()
        elapsed = time.monotonic() - started
        print(f"{self.transport}: {round_} rounds, {self.syncs} syncs by {self.editors} editors, {self.kills} killed with SIGKILL, "
              f"{len(self.ledger)} lines written, {len(lost)} lost, {len(self.failed_unkilled)} unkilled syncs failed, "
              f"{len(blocked)} editors blocked at the end, git fsck {'clean' if not fsck else 'FAILED'}, "
              f"cohort verify {'ok' if verified.returncode == 0 else 'FAILED'}, {len(dirty)} workspaces not clean, {elapsed:.0f} s")
        for problem in (lost[:5] + self.failed_unkilled[:5] + blocked[:5] + fsck[:5] + dirty[:5]
                        + ([verified.stderr.strip()] if verified.returncode else [])):
            print("  " + problem)
        if self.server:
            self.server.send_signal(signal.SIGKILL)
            self.server.wait()
        return not (lost or self.failed_unkilled or blocked or fsck or verified.returncode or dirty)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--editors", type=int, default=10)
    parser.add_argument("--transport", choices=["folder", "serve", "both"], default="both")
    parser.add_argument("--cohort", default=None, help="the cohort binary (default: build it, release)")
    parser.add_argument("--seed", type=int, default=None)
    options = parser.parse_args()
    if not 1 <= options.kills <= 100000 or not 2 <= options.editors <= 64:
        parser.error("--kills must be 1 to 100000 and --editors 2 to 64")
    cohort = options.cohort
    if cohort is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        # As every script builds it (Swift's runtime linked in statically), so .build/release is not relinked.
        cohort = os.path.join(run(["bash", "Scripts/build-release.sh", "cohort"], cwd=root).stdout.strip(), "cohort")
    seed = options.seed if options.seed is not None else random.randrange(1 << 30)
    print(f"seed {seed}")
    ok = True
    for transport in (["folder", "serve"] if options.transport == "both" else [options.transport]):
        work = tempfile.mkdtemp(prefix=f"cohort-chaos-{transport}-")
        try:
            ok = Chaos(cohort, work, transport, options.editors, options.kills, seed).main() and ok
        finally:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
