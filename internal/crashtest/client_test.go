package crashtest

import "net/http"

var httpClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
