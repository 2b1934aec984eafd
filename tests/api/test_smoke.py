def test_contacts_list_starts_empty(api):
    response = api.get("/api/contacts")
    assert response.status_code == 200
    assert response.json()["meta"]["total"] == 0
