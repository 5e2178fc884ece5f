module github.com/watchwire/watchwire/tools/tlsfixtures

go 1.26.0
