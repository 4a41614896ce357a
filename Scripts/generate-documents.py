"""Writes COUNT small Markdown documents in 100 folders under DIR (the benchmarks' workspace)."""
import os
import sys

root, count = sys.argv[1], int(sys.argv[2])
for i in range(count):
    folder = os.path.join(root, f"section-{i % 100:02d}")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"recipe-{i:05d}.md"), "w") as f:
        f.write(f"# Recipe {i}\n\n" + f"step {i} of something tasty\n" * 8)
