module example.com/pgprompt-quickstart

go 1.19

require github.com/lib/pq v1.10.7
