"""One options object for run, sweep, calibrate and map: the object form and the keyword form
are the same options, unknown ones are refused by name, and a bad value is refused before any
work."""

from __future__ import annotations

import pytest

from verification.campaign import Campaign, CampaignOptions
from verification.runner import run


def test_the_keyword_form_replaces_fields_of_the_object_form():
    base = CampaignOptions(profile="full", workers=2)
    assert CampaignOptions.of(base, workers=0) == CampaignOptions(profile="full", workers=0)
    assert CampaignOptions.of(None, force=True) == CampaignOptions(force=True)
    assert CampaignOptions.of(base) is not None and base.workers == 2      # frozen, not edited


def test_an_unknown_option_or_a_positional_profile_is_refused_by_name():
    with pytest.raises(TypeError, match="unknown campaign option.*'worker'"):
        CampaignOptions.of(worker=2)
    with pytest.raises(TypeError, match="allowed: a CampaignOptions"):
        run([], "quick", show=False)


def test_a_bad_profile_is_refused_before_any_work(tmp_path):
    with pytest.raises(ValueError, match="--profile 'medium'"):
        Campaign(CampaignOptions(profile="medium"), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_report_states_the_options_it_ran_with(tmp_path):
    report = run([], CampaignOptions(rejudge=True), out=tmp_path / "out", show=False,
                 figures=False, calibration=None)
    assert report["options"]["rejudge"] is True and report["options"]["workers"] == 0
    assert report["options"]["force"] is False and report["options"]["tls"] is None
