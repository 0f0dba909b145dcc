# SPDX-License-Identifier: BSD-3-Clause
"""One version everywhere a release is named: CMake's project() VERSION is the source. Every program's --version
prints it with the commit it was built from; CHANGELOG.md's newest dated heading, CITATION.cff's version and
date-released and the README's BibTeX entry agree with it. Work not yet released sits under "## Unreleased" at the
top of the changelog, so the checks hold both before a release is cut and after."""
import datetime
import glob
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The programs of apps/ by their source file (each has a main), and how the build names each to this test.
PROGRAMS = {"mcmclb.cpp": ("mcmclb", "MCMCLB_BIN"), "commbench.cpp": ("mcmclb-commbench", "MCMCLB_COMMBENCH")}


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def project_version(cmake_text):
    found = re.search(r"^project\(mcmclb VERSION (\d+\.\d+\.\d+) ", cmake_text, re.M)
    return found[1] if found else None


def changelog_releases(text):
    """The changelog's headings as [(version, date)], newest first; ("Unreleased", None) for that section. Raises
    ValueError naming a heading that is neither."""
    releases = []
    for heading in re.findall(r"^## (.*)$", text, re.M):
        if heading == "Unreleased":
            releases.append(("Unreleased", None))
            continue
        dated = re.fullmatch(r"(\d+\.\d+\.\d+) \((\d{4}-\d{2}-\d{2})\)", heading)
        if not dated:
            raise ValueError(f"CHANGELOG.md: heading '## {heading}' is neither '## Unreleased' nor "
                             "'## X.Y.Z (YYYY-MM-DD)'")
        releases.append((dated[1], datetime.date.fromisoformat(dated[2])))
    return releases


def release_problems(cmake_text, changelog_text, citation, readme_text):
    """What disagrees between the places that name the release; [] when they agree."""
    version = project_version(cmake_text)
    if version is None:
        return ["CMakeLists.txt: no project(mcmclb VERSION X.Y.Z ...)"]
    try:
        releases = changelog_releases(changelog_text)
    except ValueError as e:
        return [str(e)]
    problems = []
    if ("Unreleased", None) in releases[1:]:
        problems.append("CHANGELOG.md: '## Unreleased' must be the first section, and only once")
    dated = [r for r in releases if r[1] is not None]
    if not dated:
        return problems + ["CHANGELOG.md: no released section '## X.Y.Z (YYYY-MM-DD)'"]
    newest, date = dated[0]
    if newest != version:
        problems.append(f"CHANGELOG.md's newest release is {newest}, CMake's project() says {version}")
    if [d for _, d in dated] != sorted((d for _, d in dated), reverse=True):
        problems.append("CHANGELOG.md: releases are not newest first")
    if str(citation.get("version")) != version:
        problems.append(f"CITATION.cff's version is {citation.get('version')!r}, CMake's project() says {version}")
    if str(citation.get("date-released")) != date.isoformat():
        problems.append(f"CITATION.cff's date-released is {citation.get('date-released')}, CHANGELOG.md dates "
                        f"{newest} {date}")
    bibtex = re.search(r"@software\{mcmclb,(.*?)\n\}", readme_text, re.S)
    if not bibtex:
        problems.append("README.md: no @software{mcmclb, ...} entry")
    else:
        fields = dict(re.findall(r"^\s*(\w+)\s*=\s*\{(.*)\},?$", bibtex[1], re.M))
        if fields.get("version") != version or fields.get("year") != str(date.year):
            problems.append(f"README.md's BibTeX names version {fields.get('version')}, year {fields.get('year')}; "
                            f"the release is {version} of {date.year}")
    return problems


class Release(unittest.TestCase):
    def test_every_place_names_the_same_release(self):
        problems = release_problems(read("CMakeLists.txt"), read("CHANGELOG.md"),
                                    yaml.safe_load(read("CITATION.cff")), read("README.md"))
        self.assertEqual(problems, [])

    def test_a_disagreement_is_found(self):
        """Each place changed alone is a problem; an Unreleased section and a release cut (project() and the
        citation moved on, a new dated heading) are not."""
        cmake, changelog, readme = read("CMakeLists.txt"), read("CHANGELOG.md"), read("README.md")
        citation = yaml.safe_load(read("CITATION.cff"))
        version = project_version(cmake)
        later = re.sub(r"\d+$", lambda m: str(int(m[0]) + 1), version)
        self.assertNotEqual(release_problems(cmake.replace(f"VERSION {version} ", f"VERSION {later} "), changelog,
                                             citation, readme), [])
        self.assertNotEqual(release_problems(cmake, changelog, dict(citation, version=later), readme), [])
        self.assertNotEqual(release_problems(cmake, changelog, dict(citation, **{"date-released": "1999-01-01"}),
                                             readme), [])
        self.assertNotEqual(release_problems(cmake, changelog.replace(f"## {version} (", f"## {later} (", 1),
                                             citation, readme), [])
        self.assertNotEqual(release_problems(cmake, changelog, citation,
                                             readme.replace(f"version = {{{version}}}", f"version = {{{later}}}")),
                            [])
        # The lead cuts a release: the Unreleased section gets the version and the date, and a new one opens.
        date = datetime.date.today().isoformat()
        cut = re.sub(r"^## Unreleased$", f"## Unreleased\n\n## {later} ({date})", changelog, count=1, flags=re.M)
        self.assertNotEqual(cut, changelog, "no '## Unreleased' section in CHANGELOG.md")
        year = date[:4]
        readme_cut = re.sub(r"year\s*=\s*\{\d+\}", f"year    = {{{year}}}",
                            readme.replace(f"version = {{{version}}}", f"version = {{{later}}}"))
        self.assertEqual(release_problems(cmake.replace(f"VERSION {version} ", f"VERSION {later} "), cut,
                                          dict(citation, version=later, **{"date-released": date}), readme_cut), [])

    def test_citation_gives_no_address_that_reaches_nobody(self):
        """CITATION.cff names the repository's address and a contact only as the maintainers state them: each one it
        gives is an https address off the reserved test domains (.invalid, .example), and a contact has a way to
        reach it. None is stated yet, so the file gives neither rather than a placeholder."""
        citation = yaml.safe_load(read("CITATION.cff"))
        addresses = [citation.get("repository-code")] + [c.get("website") for c in citation.get("contact") or []]
        for address in filter(None, addresses):
            self.assertRegex(str(address), r"^https://[^/\s]+\.(?!invalid\b|example\b)[a-z]+(/\S*)?$", "CITATION.cff")
        for c in citation.get("contact") or []:
            self.assertTrue(c.get("email") or c.get("website"), f"CITATION.cff: contact {c} has no email or website")
            self.assertNotRegex(str(c.get("email", "")), r"\.(invalid|example)$", "CITATION.cff: a contact's email")

    def test_every_find_package_asks_for_this_release(self):
        """Every find_package(mcmclb X.Y ...) the repository shows a user or builds (examples, guides, the README,
        the install tests) asks for project()'s major.minor: below 1.0 the package accepts only its own minor
        version, so one left at the last release fails to configure against this one."""
        want = ".".join(project_version(read("CMakeLists.txt")).split(".")[:2])
        files = subprocess.run(["git", "ls-files", "*.md", "*.txt", "*.sh", "*.cmake", "*.py"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.split()
        wrong = []
        for path in files:
            if path == "CHANGELOG.md" or path.startswith("docs/data/") or path.startswith("docs/notes/archive/"):
                continue
            for asked in re.findall(r"find_package\(mcmclb (\d+\.\d+)", read(path)):
                if asked != want:
                    wrong.append(f"{path}: find_package(mcmclb {asked}")
        self.assertEqual(wrong, [], f"project() is {want}")

    def test_every_program_prints_the_release_and_its_commit(self):
        version = project_version(read("CMakeLists.txt"))
        mains = {os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "apps", "*.cpp"))
                 if re.search(r"^int main\(", read(p), re.M)}
        self.assertEqual(mains, set(PROGRAMS), "a program of apps/ this test does not run")
        for name, env in PROGRAMS.values():
            r = subprocess.run([os.environ[env], "--version"], capture_output=True, text=True, timeout=30)
            self.assertEqual((r.returncode, r.stderr), (0, ""), name)
            # The commit as git describe gives it, never a tag's name: a release tag names no build by itself.
            self.assertRegex(r.stdout, rf"^{re.escape(name)} {re.escape(version)} \(commit ([0-9a-f]{{12,40}}"
                                       r"(-dirty)?|unknown)\)\n$")


def commit_stamp(source_dir, scratch):
    """The commit cmake/WriteGitCommit.cmake stamps into a build of source_dir, as the programs print it."""
    cmake = os.environ.get("MCMCLB_CMAKE") or shutil.which("cmake")
    if not cmake:
        raise AssertionError("no cmake: set MCMCLB_CMAKE or put cmake on PATH")
    out = os.path.join(scratch, "git_commit.cpp")
    # No repository above the scratch folder is looked in, so a folder outside git is one wherever TMPDIR is.
    subprocess.run([cmake, f"-DSOURCE_DIR={source_dir}", f"-DOUTPUT={out}", "-P",
                    os.path.join(ROOT, "cmake", "WriteGitCommit.cmake")], check=True, timeout=30,
                   env=dict(os.environ, GIT_CEILING_DIRECTORIES=scratch))
    with open(out, encoding="utf-8") as f:
        return re.search(r'return "([^"]*)";', f.read())[1]


class CommitStamp(unittest.TestCase):
    """The commit a build records is "-dirty" whenever the tree it was built from differs from that commit: a file
    changed, staged, or new and not ignored (a source not yet added is still code the build may have compiled). Files
    git ignores, such as the build folders, are no part of the code and leave it clean."""

    def git(self, *args):
        subprocess.run(["git", "-C", self.repo, "-c", "user.name=test", "-c", "user.email=test@localhost", *args],
                       check=True, capture_output=True, timeout=30)

    def setUp(self):
        self.scratch = tempfile.mkdtemp(prefix="mcmclb-stamp-")
        self.addCleanup(shutil.rmtree, self.scratch)
        self.repo = os.path.join(self.scratch, "src")
        os.makedirs(self.repo)
        self.git("init", "-q")
        for name, text in (("a.cpp", "int a;\n"), (".gitignore", "/build*/\n")):
            with open(os.path.join(self.repo, name), "w", encoding="utf-8") as f:
                f.write(text)
        self.git("add", "a.cpp", ".gitignore")
        self.git("commit", "-q", "-m", "first")

    def write(self, name, text="int b;\n"):
        path = os.path.join(self.repo, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def test_a_clean_tree_and_its_ignored_build_folder_are_clean(self):
        self.assertRegex(commit_stamp(self.repo, self.scratch), r"^[0-9a-f]{12}$")
        self.write("build-test/generated/x.cpp")
        self.assertRegex(commit_stamp(self.repo, self.scratch), r"^[0-9a-f]{12}$")

    def test_an_untracked_file_is_dirty(self):
        self.write("b.cpp")
        self.assertRegex(commit_stamp(self.repo, self.scratch), r"^[0-9a-f]{12}-dirty$")

    def test_a_changed_or_staged_file_is_dirty(self):
        self.write("a.cpp")
        self.assertRegex(commit_stamp(self.repo, self.scratch), r"^[0-9a-f]{12}-dirty$")
        self.git("add", "a.cpp")
        self.assertRegex(commit_stamp(self.repo, self.scratch), r"^[0-9a-f]{12}-dirty$")

    def test_a_folder_outside_git_is_unknown(self):
        os.makedirs(os.path.join(self.scratch, "plain"))
        self.assertEqual(commit_stamp(os.path.join(self.scratch, "plain"), self.scratch), "unknown")


if __name__ == "__main__":
    unittest.main()
