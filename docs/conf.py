"""Sphinx configuration of faq's documentation: ``make docs`` builds it into ``build/docs``.

The pages are Markdown (MyST) beside this file, the API reference is autodoc over the
docstrings (numpydoc format), and the notebooks in ``notebooks/`` are rendered with the
outputs they are committed with (myst-nb, nothing executed). ``tests/test_docs.py``
builds the site with warnings as errors.

Links between the Markdown pages are written as relative file links (``[x](maintained.md)``,
``[y](../tests/data/README.md)``) so that they also work where the files are read as they are
(GitHub, an editor). A link to a file of the repository that is not a page of the site is
rendered by :class:`RepositoryLinks` as a link to that file in the checkout the site was built
from (or under ``$FAQ_DOCS_SOURCE_URL`` when that is set, e.g. a repository's web view).
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging as sphinx_logging

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # autodoc documents this checkout's faq, installed or not

import faq  # noqa: E402  (cheap: its names load on first use)

project = "faq"
author = "faq developers"
copyright = "faq developers"
release = version = faq.__version__

extensions = [
    "sphinx.ext.autodoc",
    "numpydoc",  # the docstrings' format: Parameters, Returns, Examples, ... sections
    "myst_nb",  # Markdown pages (it brings myst-parser) and the notebooks, rendered from their stored outputs
]

# -- pages ----------------------------------------------------------------------------------
root_doc = "index"
# notebooks/ here is a link to the repository's notebooks/ folder; its README is the folder's own note
# (rendered on GitHub), summed up by notebooks.md.
exclude_patterns = ["_build", "notebooks/README.md", "**/.ipynb_checkpoints"]
myst_heading_anchors = 4  # GitHub's anchors for headings (#a-semiring-of-your-own), as the pages link them
myst_enable_extensions = ["dollarmath"]  # the notebooks' $...$ formulas
nb_execution_mode = "off"  # show the outputs the notebooks are committed with; tests/test_notebook.py runs them

# -- API reference -------------------------------------------------------------------------
autodoc_member_order = "bysource"
# numpydoc would list each class's members as an autosummary table (another extension, stub pages);
# the reference documents members with autodoc's :members: instead.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

# -- output --------------------------------------------------------------------------------
html_theme = "alabaster"  # Sphinx's own: no theme to install
html_title = f"faq {release}"
# A content column wide enough for the pages' code (lines of up to about 118 characters) without a scrollbar:
# alabaster's 940px page and basic's 800px body cut them at about 75; below page_width the sidebar goes on top.
html_theme_options = {"description": "Functional Aggregate Queries on Apache Spark", "fixed_sidebar": True,
                      "page_width": "1400px", "body_max_width": "none", "code_font_size": "0.85em"}
html_sidebars = {"**": ["about.html", "navigation.html", "searchbox.html"]}


BUILDER: dict = {}  # the builder of this run (for output paths; a transform's own ``app`` is deprecated)


class RepositoryLinks(SphinxPostTransform):
    """A Markdown link to a repository file that is not a page: a link to that file, not a warning.

    MyST reads ``[text](../tests/data/README.md)`` as a reference to a document of the site and
    warns when there is none.  Before it does (this runs first), such a link whose target is a file
    of the repository becomes a link to the page that file is, if it is one (the notebooks, read
    through ``docs/notebooks``), else to the file itself: under ``$FAQ_DOCS_SOURCE_URL`` if that is
    set, otherwise relative to the page in the output, into the checkout.  A link to a file that
    does not exist is left to MyST, which warns.
    """

    default_priority = 5  # MyST resolves its references at 9

    def run(self, **kwargs) -> None:
        pages = {(DOCS / self.env.doc2path(doc, False)).resolve(): doc for doc in self.env.found_docs}
        for node in list(self.document.findall(addnodes.pending_xref)):
            path = self._file(node)
            if path is None:
                continue
            anchor = f"#{node['reftargetid']}" if node.get("reftargetid") else ""
            builder = BUILDER["builder"]
            if path.resolve() in pages:
                uri = builder.get_relative_uri(self.env.docname, pages[path.resolve()]) + anchor
            elif os.environ.get("FAQ_DOCS_SOURCE_URL"):
                uri = os.environ["FAQ_DOCS_SOURCE_URL"].rstrip("/") + "/" + path.relative_to(ROOT).as_posix() + anchor
            else:
                page_dir = (Path(builder.outdir) / builder.get_target_uri(self.env.docname)).parent
                uri = Path(os.path.relpath(path, page_dir)).as_posix() + anchor
            reference = nodes.reference("", "", internal=False, refuri=uri)
            reference += node.children or [nodes.literal(node["reftarget"], node["reftarget"])]
            node.replace_self(reference)

    def _file(self, node: addnodes.pending_xref) -> Path | None:
        """The repository file a MyST link to a document that is not in the site names, or None."""
        if node.get("reftype") != "myst" or node.get("refdomain") != "doc" or node["reftarget"] in self.env.all_docs:
            return None
        stem = Path(node["reftarget"])  # MyST's name for a file outside the site: its path without the suffix
        stem = stem if stem.is_absolute() else DOCS / stem
        for suffix in self.config.source_suffix:
            path = Path(os.path.normpath(f"{stem}{suffix}"))
            if path.is_file() and path.is_relative_to(ROOT):
                return path
        return None


def numpydoc_warnings_as_sphinx_warnings() -> None:
    """Report what numpydoc finds wrong in a docstring as a Sphinx warning, so ``-W`` fails on it.

    numpydoc says "Unknown section ..." (and the like) with Python's :func:`warnings.warn`, which
    ``sphinx-build -W`` does not see, and which Python shows once per line of numpydoc's code: a
    second docstring with the same fault would go unsaid.  Every one of them becomes a warning of
    type ``numpydoc`` here.
    """
    logger = sphinx_logging.getLogger("numpydoc")
    shown = warnings.showwarning
    said: set[str] = set()  # numpydoc reads a docstring more than once: each fault is said once

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, UserWarning) and "numpydoc" in Path(filename).parts:
            if str(message) not in said:
                said.add(str(message))
                logger.warning(str(message), type="numpydoc", subtype="docstring")
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    warnings.filterwarnings("always", category=UserWarning, module=r"numpydoc\.")


def setup(app):
    numpydoc_warnings_as_sphinx_warnings()
    app.connect("builder-inited", lambda app: BUILDER.update(builder=app.builder))
    app.add_post_transform(RepositoryLinks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
