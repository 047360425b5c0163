"""The Project list of the pages' filters: the first projects by name, and, once there are more
than it lists, a Find project box that asks the server for the projects starting with what is
typed (a store may hold tens of thousands of projects; a list of them all would not scale)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from starlette.requests import Request

from aletheia_mem.canonical import canonical
from aletheia_mem.projects import MAX_PROJECT_LENGTH

PROJECTS_LISTED = 500
FIND_FIELD = "find_project"


@dataclass(frozen=True)
class ProjectChoice:
    """The names the Project list offers, the start of a name typed in Find project, and
    whether more projects (starting with it) exist than the list holds."""

    names: list[str]
    find: str
    more: bool

    @property
    def finder(self) -> bool:
        """Whether the page shows Find project: only when it is needed, or in use."""
        return self.more or bool(self.find)

    @property
    def note(self) -> str:
        """What Find project's note says: why the list is short, or that nothing matched."""
        if self.more:
            which = "projects starting with that" if self.find else "projects"
            return (
                f"Only the first {PROJECTS_LISTED} {which} are listed:"
                " type the start of a name and press Enter."
            )
        if self.find and not self.names:
            return "No project starts with that."
        return ""


def typed_start(request: Request) -> str:
    """The start of a project name typed in Find project, as project keys are (lower-case,
    trimmed, NFC), at most a project key long."""
    typed = request.query_params.get(FIND_FIELD, "")
    return canonical(canonical(typed).strip().lower())[:MAX_PROJECT_LENGTH]


def project_choice(request: Request, names: Callable[[int, str], list[str]]) -> ProjectChoice:
    """The Project list of this request: ``names(limit, starting)`` reads the names by name
    from the store; one more than listed is read, to know whether others exist."""
    find = typed_start(request)
    found = names(PROJECTS_LISTED + 1, find)
    return ProjectChoice(found[:PROJECTS_LISTED], find, len(found) > PROJECTS_LISTED)
