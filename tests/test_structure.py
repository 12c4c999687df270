"""Library-wide conventions: abstract-or-final classes, docstrings on the public API."""

import abc
import inspect

import equinox as eqx

import netdyn as nd


def _netdyn_classes():
    seen = set()
    stack = [eqx.Module]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
    return [c for c in seen if c.__module__.startswith("netdyn.")]


def test_concrete_classes_are_final():
    for cls in _netdyn_classes():
        for base in cls.__mro__[1:]:
            if base.__module__.startswith("netdyn."):
                assert base.__name__.startswith("Abstract"), (
                    f"{cls.__name__} subclasses the concrete class {base.__name__}"
                )


def test_abstract_classes_are_abstract():
    for cls in _netdyn_classes():
        if cls.__name__.startswith("Abstract"):
            assert inspect.isabstract(cls) or cls.__abstractvars__ or cls.__abstractclassvars__ \
                or any(isinstance(b, abc.ABCMeta) for b in cls.__mro__[1:2]), cls


def test_public_api_is_documented():
    for name in dir(nd):
        if name.startswith("_"):
            continue
        obj = getattr(nd, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__ and obj.__doc__.strip(), f"netdyn.{name} has no docstring"
