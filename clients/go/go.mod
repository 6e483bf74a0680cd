module lockd.dev/go/lockd

go 1.19
