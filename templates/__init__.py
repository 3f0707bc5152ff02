"""The HTML report templates (jinja2, autoescape on): report.html.j2 (a cluster's and a fleet's
report), preflight.html.j2 and their macros. Kept at the top of the repository, as the design card
lays it out, and shipped as a package of its own beside ``auditor`` and ``checks``: one lookup,
``importlib.resources.files("templates")``, is right in a wheel, an editable install and a source
checkout (README, "Layout"). It holds no code.
"""
