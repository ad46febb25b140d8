"""Files that cannot be read at all."""

import os

import pytest

import dpglm.data.files as files_module
from dpglm.data import SUPPORTED_EXTENSIONS, load
from dpglm.exceptions import UnreadableFileError


def test_missing_file(tmp_path):
    with pytest.raises(UnreadableFileError, match=r"nope.csv'?: No such file or directory"):
        load(tmp_path / "nope.csv")


def test_directory(tmp_path):
    (tmp_path / "folder.csv").mkdir()
    with pytest.raises(UnreadableFileError, match=r"folder.csv'?: Is a directory"):
        load(tmp_path / "folder.csv")


def test_permission_denied(tmp_path, monkeypatch):
    # simulated: the test suite may run as root, who can read any file
    path = tmp_path / "secret.csv"
    path.write_text("a,y\n1,2\n")

    def refuse(file, *args, **kwargs):
        raise PermissionError(13, "Permission denied", os.fspath(file))

    # The module looks `open` up in its own globals before the builtins.
    monkeypatch.setattr(files_module, "open", refuse, raising=False)
    with pytest.raises(UnreadableFileError, match=r"secret.csv'?: Permission denied"):
        load(path)


@pytest.mark.parametrize("name", ["data.txt", "data.json", "data", "data.csv.bz2"])
def test_unknown_extension_lists_the_supported_ones(tmp_path, name):
    path = tmp_path / name
    path.write_text("a,y\n1,2\n")
    with pytest.raises(UnreadableFileError, match="unknown file extension") as info:
        load(path)
    for ext in SUPPORTED_EXTENSIONS:
        assert ext in str(info.value)


def test_target_must_be_a_name_for_files(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,y\n1,2\n")
    with pytest.raises(TypeError, match="target must be a column name"):
        load(path, target=1)
