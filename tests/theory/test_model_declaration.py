"""Model declarations (``theory.Model``, ``theory.Geometry``): bad parameters and overlaps are
rejected at the boundary with a message naming the parameter and its range, a model delegates
its geometry, builds the same from its geometry's parts, and a perturbed copy changes its key."""

import pytest

from theory.models.marion2025 import MODEL

GOOD = dict(d=10, L=3, lam=0.5, gamma=0.8, eps=0.1)
OV = dict(kappa=0.2, nu=0.1, theta=0.0, eta=0.0, rho=0.0)


def test_missing_and_unknown_parameters():
    with pytest.raises(ValueError, match="missing"):
        MODEL.check_params({"d": 3})
    with pytest.raises(ValueError, match="unknown"):
        MODEL.check_params({**GOOD, "beta": 1})


def test_missing_parameters_are_named_with_their_ranges():
    with pytest.raises(ValueError, match=r"missing parameter\(s\) L \(integer in \[1, inf\]\), lam "
                                         r"\(real in \(0, inf\)\)"):
        MODEL.check_params({"d": 3, "gamma": 1, "eps": 0})


def test_unrealisable_overlaps_name_the_smallest_offending_set():
    with pytest.raises(ValueError, match=r"kappa=0.9, rho=-0.9, theta=0.9 are not realisable by "
                                         r"vectors: the Gram matrix of \['k', 'v', 'k_star'\]"):
        MODEL.check_overlaps(dict(kappa=0.9, nu=0.9, theta=0.9, eta=0.9, rho=-0.9))
    with pytest.raises(ValueError, match=r"missing order parameter rho; known: \['kappa'"):
        MODEL.check_overlaps({k: v for k, v in OV.items() if k != "rho"})


def test_model_delegates_its_geometry():
    from theory import Geometry
    geo = MODEL.geometry
    assert isinstance(geo, Geometry)
    assert MODEL.hidden == geo.hidden == ("k_star", "v_star")
    assert MODEL.trainable == geo.trainable and MODEL.overlaps is geo.overlaps
    assert MODEL.order_parameters == geo.order_parameters and MODEL.vectors == geo.vectors
    assert MODEL.gram() == geo.gram() and MODEL.inner("k", "k_star") == geo.inner("k", "k_star")
    assert MODEL.trainable_vector("k").constraint == "sphere"
    assert MODEL.check_overlaps(OV) == geo.check_overlaps(OV)


def test_model_from_geometry_parts_and_perturbed_keys():
    """Model(hidden=, trainable=, overlaps=) builds the same model as Model(geometry=); a
    perturbed copy keeps the geometry and changes the canonical key (the cache key)."""
    import sympy as sp
    from theory import Model, model_key
    parts = dict(hidden=MODEL.hidden, trainable=MODEL.trainable, overlaps=MODEL.overlaps)
    same = Model(MODEL.name, params=MODEL.params, data=MODEL.data, student=MODEL.student,
                 label=MODEL.label, label_noise=MODEL.label_noise, dimension=MODEL.dimension,
                 citation=MODEL.citation, **parts)
    assert model_key(same) == model_key(MODEL)
    other = MODEL.perturbed(label=sp.S.Zero)
    assert other.geometry == MODEL.geometry and model_key(other) != model_key(MODEL)
    fewer = MODEL.perturbed(hidden=("k_star", "v_star", "w_star"))
    assert fewer.vectors[-1] == "w_star" and fewer.overlaps == MODEL.overlaps
    with pytest.raises(ValueError, match="give geometry= or all of"):
        Model("x", hidden=("h",))


def test_geometry_rejects_pairs_of_unknown_or_hidden_vectors():
    import sympy as sp
    from theory import Geometry, Vector
    a = sp.Symbol("a")
    with pytest.raises(ValueError, match=r"names the pair \(w, z\); allowed vector names"):
        Geometry(("h",), (Vector("w"),), {("w", "z"): a})
    with pytest.raises(ValueError, match="pairs two hidden vectors"):
        Geometry(("h", "g"), (Vector("w"),), {("h", "g"): a})
