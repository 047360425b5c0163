"""The row classes whose ``__init__`` is written out stay what their dataclass says: each field
set from its argument, the declared defaults, frozen, equal by value, ``replace`` working."""

import dataclasses
import inspect

import pytest

from aletheia_mem.domain.memories import MemoryInput
from aletheia_mem.storage.base import Memory
from aletheia_mem.storage.entries import NewMemory

CLASSES = [Memory, NewMemory, MemoryInput]


@pytest.mark.parametrize("cls", CLASSES)
def test_the_init_takes_every_field_in_order_with_its_declared_default(cls: type) -> None:
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    fields = dataclasses.fields(cls)
    assert [p.name for p in parameters] == [f.name for f in fields]
    for parameter, field in zip(parameters, fields, strict=True):
        declared = (
            inspect.Parameter.empty if field.default is dataclasses.MISSING else field.default
        )
        assert parameter.default == declared, field.name


@pytest.mark.parametrize("cls", CLASSES)
def test_each_field_holds_its_own_argument_and_the_instance_is_frozen(cls: type) -> None:
    names = [f.name for f in dataclasses.fields(cls)]
    values = {name: f"value of {name}" for name in names}
    made = cls(**values)
    assert {name: getattr(made, name) for name in names} == values
    assert made == cls(*values.values())
    assert hash(made) == hash(cls(**values))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.text = "changed"
    changed = dataclasses.replace(made, text="other")
    assert changed.text == "other"
    assert changed != made
    assert dataclasses.replace(changed, text=made.text) == made
