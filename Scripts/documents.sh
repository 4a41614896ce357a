# Sourced by the benchmark scripts: documents_collaboration WORKSPACE BARE FILES makes FILES documents
# in WORKSPACE (generate-documents.py), starts a collaboration there (one notice per document) and
# syncs it into the bare repository BARE, which runs Cohort's verifying hook. Needs `cohort` on PATH
# and COHORT_HOME set; sets a committer for git when none is configured.
git config --global user.name >/dev/null 2>&1 || export GIT_AUTHOR_NAME=Bench GIT_COMMITTER_NAME=Bench \
  GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_EMAIL=bench@example.com
documents_collaboration() {
  mkdir -p "$1"
  python3 "$(dirname "${BASH_SOURCE[0]}")/generate-documents.py" "$1" "$3"
  cohort start "$1" --title "Benchmark Recipes" >/dev/null 2>&1
  git init -q --bare "$2"
  cohort hook install "$2" >/dev/null
  git -C "$1" remote add origin "$2"
  cohort sync --workspace "$1" >/dev/null
}
